// Node names folded into xCAT's noderange shorthand, for the results of actions and nodeshell.

/**
 * Folds node names as xCAT's noderange writes them: "cn01,cn02,cn03,cn07" -> "cn[01-03],cn07".
 * Names that share a prefix, a suffix and the width of their number make one bracketed run
 * per consecutive stretch; other names stay as they are. The result is sorted.
 */
export function foldNames(names) {
  const series = new Map();
  const plain = [];
  for (const n of names) {
    const m = /^(.*?)(\d+)(\D*)$/.exec(n);
    if (!m) {
      plain.push(n);
      continue;
    }
    const key = `${m[1]}\u0000${m[2].length}\u0000${m[3]}`;
    if (!series.has(key)) series.set(key, { prefix: m[1], suffix: m[3], nums: [] });
    series.get(key).nums.push(m[2]);
  }
  const parts = plain.map((n) => ({ sort: n, text: n }));
  for (const s of series.values()) {
    const nums = [...new Set(s.nums)].sort((a, b) => Number(a) - Number(b));
    let i = 0;
    while (i < nums.length) {
      let j = i;
      while (j + 1 < nums.length && Number(nums[j + 1]) === Number(nums[j]) + 1) ++j;
      const text =
        i === j
          ? `${s.prefix}${nums[i]}${s.suffix}`
          : `${s.prefix}[${nums[i]}-${nums[j]}]${s.suffix}`;
      parts.push({ sort: `${s.prefix}${nums[i]}${s.suffix}`, text });
      i = j + 1;
    }
  }
  parts.sort((a, b) => (a.sort < b.sort ? -1 : a.sort > b.sort ? 1 : 0));
  return parts.map((p) => p.text).join(',');
}
