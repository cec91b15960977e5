/** `$normalizeDiacritics`: letters with accents become their plain letters (José Müller → Jose Muller). */

/** Letters that carry no combining mark to drop, spelled as they are usually written in ASCII. */
const SPECIAL_LETTERS: Readonly<Record<string, string>> = {
  ß: 'ss',
  ẞ: 'SS',
  Æ: 'AE',
  æ: 'ae',
  Ø: 'O',
  ø: 'o',
  Œ: 'OE',
  œ: 'oe',
  Ł: 'L',
  ł: 'l',
  Đ: 'D',
  đ: 'd',
  Ð: 'D',
  ð: 'd',
  Þ: 'TH',
  þ: 'th',
  ı: 'i',
  Ħ: 'H',
  ħ: 'h',
};
const SPECIAL = new RegExp(`[${Object.keys(SPECIAL_LETTERS).join('')}]`, 'gu');
const COMBINING_MARKS = /\p{M}/gu;
const NOT_ASCII = /[^\u0020-\u007e]/;

/** The text with diacritics removed; anything that is not a letter with marks is kept as is. */
export function normalizeDiacritics(text: string): string {
  if (!NOT_ASCII.test(text)) return text;
  return text
    .normalize('NFD')
    .replace(COMBINING_MARKS, '')
    .replace(SPECIAL, (letter) => SPECIAL_LETTERS[letter] ?? letter)
    .normalize('NFC');
}
