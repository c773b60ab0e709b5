// Numbers read back from REAL columns. Rows written before the bounds of README "Request limits"
// may hold ±Infinity (`1e400` parsed to it), and a product of two stored numbers may overflow to
// it. JSON has no Infinity: the response schema refuses it (a 500) and JSON.stringify would write
// null. A read shows the nearest JSON number, ±the largest double, so the record stays readable
// and can be corrected. (SQLite stores NaN as NULL: no NaN is read back.)

/** `n`, or ±Number.MAX_VALUE in place of ±Infinity. */
export function finite<N extends number | null>(n: N): N {
  if (n === null || Number.isFinite(n)) return n;
  return (n > 0 ? Number.MAX_VALUE : -Number.MAX_VALUE) as N;
}
