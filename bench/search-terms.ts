// Search terms no request repeats, for the "terms never repeated" rows (bench/run.ts) and the
// profile's `novel` step (bench/search-profile.ts): each call pays a match set's load.
import { contractBody } from "../test/support/contract-body";

/**
 * The distinct 3-8 character substrings of the names `count` seeded persons have (no leading or
 * trailing space), in a fixed shuffled order: terms that hit from one person ("a 1234") to every
 * eighth ("silva"). (3-5 characters give only 12,486 terms over 10,000 persons: a few seconds of
 * requests.)
 */
export function searchTerms(count: number): string[] {
  const seen = new Set<string>();
  for (let i = 0; i < count; i++) {
    const name = contractBody(i).customer.name.toLowerCase();
    for (let len = 3; len <= 8; len++) {
      for (let at = 0; at + len <= name.length; at++) {
        const term = name.slice(at, at + len);
        if (term.trim() === term) seen.add(term);
      }
    }
  }
  const terms = [...seen];
  // Fisher-Yates with a fixed linear congruential sequence: the same order in every run.
  let x = 12345;
  for (let i = terms.length - 1; i > 0; i--) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const j = x % (i + 1);
    [terms[i], terms[j]] = [terms[j]!, terms[i]!];
  }
  return terms;
}
