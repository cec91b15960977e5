/**
 * Look-alike keys: two usernames (or group names) that a person reading them cannot tell apart
 * get the same `lookalikeKey`. It is the composition of three foldings:
 *
 * 1. NFKC: compatibility forms become plain ones (full-width `ａｌｉｃｅ`, ligatures, math
 *    letters, superscripts, circled letters);
 * 2. full case folding (`ALICE`, `Alice`, `ß` as `ss`, final sigma);
 * 3. a confusables skeleton after Unicode TR39: characters are decomposed (NFD), invisible
 *    (default-ignorable) ones dropped, and each remaining character replaced by the Latin
 *    letter it is drawn like (Cyrillic `а` as `a`, Greek `ο` as `o`, `0` as `o`, `1` as `l`).
 *
 * The confusables table below is a curated subset of TR39's confusables.txt, chosen for the
 * scripts and symbols that pass for Latin letters in names: Cyrillic, Greek, Armenian, Latin
 * small capitals and IPA letters, digits, dashes and quotes. Because case is folded before the
 * skeleton (so that `ALICE` meets `alice`), a letter maps to the Latin letter its capital or
 * its small form resembles, whichever is the usual disguise; TR39's distinction between `I`
 * and `l` is given up for the same reason.
 *
 * Pure, deterministic (no locale) and fast: plain ASCII takes one pass over its characters.
 */

/** Source character (already NFKC, case-folded and NFD) → Latin prototype. */
const CONFUSABLES: ReadonlyMap<string, string> = new Map([
  // digits and ASCII symbols drawn like letters
  ['0', 'o'],
  ['1', 'l'],
  ['|', 'l'],
  // Latin letters outside ASCII, IPA and small capitals
  ['\u0131', 'i'], // ı dotless i
  ['\u0138', 'k'], // ĸ kra
  ['\u01C0', 'l'], // ǀ dental click
  ['\u0251', 'a'], // ɑ
  ['\u0261', 'g'], // ɡ
  ['\u0269', 'i'], // ɩ
  ['\u026A', 'i'], // ɪ
  ['\u0274', 'n'], // ɴ
  ['\u0280', 'r'], // ʀ
  ['\u028F', 'y'], // ʏ
  ['\u0299', 'b'], // ʙ
  ['\u029C', 'h'], // ʜ
  ['\u029F', 'l'], // ʟ
  ['\u1D00', 'a'], // ᴀ
  ['\u1D04', 'c'], // ᴄ
  ['\u1D05', 'd'], // ᴅ
  ['\u1D07', 'e'], // ᴇ
  ['\u1D0A', 'j'], // ᴊ
  ['\u1D0B', 'k'], // ᴋ
  ['\u1D0D', 'm'], // ᴍ
  ['\u1D0F', 'o'], // ᴏ
  ['\u1D18', 'p'], // ᴘ
  ['\u1D1B', 't'], // ᴛ
  ['\u1D1C', 'u'], // ᴜ
  ['\u1D20', 'v'], // ᴠ
  ['\u1D21', 'w'], // ᴡ
  ['\u1D22', 'z'], // ᴢ
  ['\uA731', 's'], // ꜱ
  // Cyrillic (small letters; capitals are folded to them first)
  ['\u0430', 'a'], // а
  ['\u0432', 'b'], // в (В)
  ['\u0435', 'e'], // е
  ['\u043A', 'k'], // к
  ['\u043C', 'm'], // м (М)
  ['\u043D', 'h'], // н (Н)
  ['\u043E', 'o'], // о
  ['\u0440', 'p'], // р
  ['\u0441', 'c'], // с
  ['\u0442', 't'], // т (Т)
  ['\u0443', 'y'], // у
  ['\u0445', 'x'], // х
  ['\u0455', 's'], // ѕ
  ['\u0456', 'i'], // і
  ['\u0458', 'j'], // ј
  ['\u04BB', 'h'], // һ
  ['\u04AF', 'y'], // ү
  ['\u04CF', 'l'], // ӏ
  ['\u0501', 'd'], // ԁ
  ['\u051B', 'q'], // ԛ
  ['\u051D', 'w'], // ԝ
  // Greek (small letters; capitals are folded to them first)
  ['\u03B1', 'a'], // α
  ['\u03B2', 'b'], // β (Β)
  ['\u03B3', 'y'], // γ
  ['\u03B5', 'e'], // ε (Ε)
  ['\u03B6', 'z'], // ζ (Ζ)
  ['\u03B7', 'n'], // η
  ['\u03B9', 'i'], // ι
  ['\u03BA', 'k'], // κ
  ['\u03BC', 'm'], // μ (Μ)
  ['\u03BD', 'v'], // ν
  ['\u03BF', 'o'], // ο
  ['\u03C1', 'p'], // ρ
  ['\u03C4', 't'], // τ (Τ)
  ['\u03C5', 'u'], // υ
  ['\u03C7', 'x'], // χ
  ['\u03F2', 'c'], // ϲ lunate sigma
  ['\u03F3', 'j'], // ϳ
  // Armenian
  ['\u0561', 'w'], // ա
  ['\u0566', 'q'], // զ
  ['\u0570', 'h'], // հ
  ['\u0578', 'n'], // ո
  ['\u057D', 'u'], // ս
  ['\u0585', 'o'], // օ
  // dashes and quotes
  ['\u2010', '-'],
  ['\u2011', '-'],
  ['\u2012', '-'],
  ['\u2013', '-'],
  ['\u2014', '-'],
  ['\u2015', '-'],
  ['\u2212', '-'],
  ['\u02BC', "'"],
  ['\u2018', "'"],
  ['\u2019', "'"],
  ['\u2032', "'"],
  ['`', "'"],
]);

const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;

/**
 * The look-alike form of each ASCII character: case folded, then its confusable's prototype
 * (`A` is `a`, `1` is `l`); `FOLDED_CODES` says which ones change.
 */
const FOLDED: readonly string[] = Array.from({ length: 0x80 }, (_, code) => {
  const folded = String.fromCharCode(code).toLowerCase();
  return CONFUSABLES.get(folded) ?? folded;
});
const CHANGED: readonly boolean[] = FOLDED.map((folded, code) => folded.charCodeAt(0) !== code);

/** The key under which look-alikes of `key` meet: NFKC, case folding and a TR39 skeleton. */
export function lookalikeKey(key: string): string {
  // plain ASCII: one pass, and a new string only when a character changes
  let folded = '';
  let from = 0;
  for (let at = 0; at < key.length; at++) {
    const code = key.charCodeAt(at);
    if (code >= 0x80) return fullLookalikeKey(key);
    if (CHANGED[code]) {
      folded += key.slice(from, at) + FOLDED[code];
      from = at + 1;
    }
  }
  return from === 0 ? key : folded + key.slice(from);
}

function fullLookalikeKey(key: string): string {
  const folded = key.normalize('NFKC').toUpperCase().toLowerCase();
  const decomposed = folded.replace(IGNORABLE, '').normalize('NFD');
  let skeleton = '';
  for (const character of decomposed) skeleton += CONFUSABLES.get(character) ?? character;
  return skeleton.normalize('NFD');
}
