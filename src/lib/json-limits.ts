// Bounds a JSON body before JSON.parse builds it: nesting depth, number of values, and numbers
// that would parse to Infinity. A deeply nested body is cheap to send and expensive for everything
// after the parse (validation, error messages, recursive walks), so it is refused by a linear scan
// of the text, in constant time per character, before any value exists.
import { invalid, type Problem } from "./problem";

/** Levels of objects and arrays a body may nest, the body itself being level 1. */
export const MAX_JSON_DEPTH = 32;
/** Values (members and elements, containers included) a body may hold. */
export const MAX_JSON_VALUES = 100_000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

interface Frame {
  array: boolean;
  /** The member key's text, quotes included, in an object: where a nested value sits. */
  keyStart: number;
  keyEnd: number;
  index: number;
}

/**
 * The 400 for a body nested deeper than `maxDepth` (naming the path where it got too deep),
 * holding more than `maxValues` values, or with a number beyond a double's range (naming its
 * path); null when within bounds. Malformed text is left to JSON.parse, which reports it.
 */
export function jsonShapeProblem(text: string, maxDepth = MAX_JSON_DEPTH, maxValues = MAX_JSON_VALUES): Problem | null {
  const frames: Frame[] = [];
  let depth = 0;
  let values = 1;
  let stringStart = -1;
  let stringEnd = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Jump to the closing quote: the first one not escaped by an odd run of backslashes.
      let j = i + 1;
      for (;;) {
        j = text.indexOf('"', j);
        if (j === -1) return null;
        let k = j - 1;
        while (text.charCodeAt(k) === BACKSLASH) k--;
        if ((j - 1 - k) % 2 === 0) break;
        j++;
      }
      stringStart = i;
      stringEnd = j;
      i = j;
    } else if (c === 0x7b || c === 0x5b) {
      // { or [
      if (depth === maxDepth) return invalid(pathOf(text, frames, depth), `nests deeper than ${maxDepth} levels`);
      const frame = frames[depth] ?? (frames[depth] = { array: false, keyStart: -1, keyEnd: -1, index: 0 });
      frame.array = c === 0x5b;
      frame.keyStart = -1;
      frame.index = 0;
      depth++;
    } else if (c === 0x7d || c === 0x5d) {
      if (depth > 0) depth--;
    } else if (c === 0x3a) {
      // ':' ends a member's key
      if (depth > 0) {
        frames[depth - 1].keyStart = stringStart;
        frames[depth - 1].keyEnd = stringEnd;
      }
    } else if (c === 0x2c) {
      // ',' starts the next member or element
      if (++values > maxValues) return invalid("body", `holds more than ${maxValues} values`);
      if (depth > 0) frames[depth - 1].index++;
    } else if ((c >= 0x30 && c <= 0x39) || c === 0x2d) {
      // A number: JSON.parse turns one too large for a double (1e400, 400 digits) into Infinity,
      // which no field can hold; only a literal with an exponent or 309+ characters can be one.
      let j = i + 1;
      let exponent = false;
      for (; j < text.length; j++) {
        const d = text.charCodeAt(j);
        if (d === 0x65 || d === 0x45) exponent = true;
        else if (!((d >= 0x30 && d <= 0x39) || d === 0x2e || d === 0x2b || d === 0x2d)) break;
      }
      if ((exponent || j - i > 308) && !Number.isFinite(Number(text.slice(i, j)))) {
        return invalid(depth > 0 ? pathOf(text, frames, depth) : "body", "is a number too large for a double");
      }
      i = j - 1;
    }
  }
  return null;
}

/** The dotted path of the value being opened at `depth` (`user.0.0`), or `body` at the top. */
function pathOf(text: string, frames: Frame[], depth: number): string {
  const parts: string[] = [];
  for (let d = 0; d < depth; d++) {
    const f = frames[d];
    if (f.array) parts.push(String(f.index));
    else if (f.keyStart >= 0) parts.push(keyText(text.slice(f.keyStart, f.keyEnd + 1)));
  }
  return parts.length ? parts.join(".") : "body";
}

function keyText(quoted: string): string {
  let key: string;
  try {
    key = JSON.parse(quoted);
  } catch {
    key = quoted.slice(1, -1);
  }
  return key.length > 64 ? `${key.slice(0, 64)}…` : key;
}
