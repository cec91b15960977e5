/**
 * Regular expressions that can take exponential time on a backtracking engine (JavaScript's):
 * a repeated group that itself repeats or alternates (`(a+)+`, `(a|aa)*`, `(a?){30}`), and
 * back-references. Refused where a pattern is given (`--scope-match`, a mapping's expressions)
 * before anything is matched against it. Polynomial patterns (`a*a*a*b`) pass: where they could
 * still run long, the matching is bounded otherwise (keys' length, an expression's thread).
 */

/** Why `pattern` can take exponential time, or undefined when it cannot. */
export function exponentialRisk(pattern: string): string | undefined {
  if (/\\[1-9]|\\k</.test(pattern)) return 'back-references are not allowed';
  if (nestedRepetition(pattern)) {
    return 'a repeated group that itself repeats or alternates (like (a+)+ or (a|b)*) can take exponential time; simplify the pattern';
  }
  return undefined;
}

/** Whether a group holding a quantifier or an alternation is itself quantified. */
function nestedRepetition(pattern: string): boolean {
  // for each open group: whether its body repeats or alternates
  const stack: boolean[] = [];
  let inClass = false;
  for (let index = 0; index < pattern.length; index++) {
    const char = pattern[index]!;
    if (char === '\\') {
      index++;
      continue;
    }
    if (inClass) {
      if (char === ']') inClass = false;
      continue;
    }
    if (char === '[') inClass = true;
    else if (char === '(') stack.push(false);
    else if (char === ')') {
      const risky = stack.pop() ?? false;
      const next = pattern[index + 1];
      if (risky && next !== undefined && '*+{'.includes(next)) return true;
      if (risky && stack.length > 0) stack[stack.length - 1] = true;
    } else if ('*+{|'.includes(char) || (char === '?' && pattern[index - 1] !== '(')) {
      if (stack.length > 0) stack[stack.length - 1] = true;
    }
  }
  return false;
}
