/** "Did you mean …?" for a misspelled key: the nearest known one, if it is near enough to be a typo. */

/**
 * The candidate nearest to `word`, compared case-insensitively by edit distance in which swapping
 * two neighbouring letters counts once (`lable` → `label`); `undefined` when none is within a third
 * of the word's length (at least 1). Ties go to the earlier candidate.
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const target = word.toLowerCase()
  const limit = Math.max(1, Math.floor(word.length / 3))
  let best: string | undefined
  let bestDistance = limit + 1
  for (const candidate of candidates) {
    const distance = editDistance(target, candidate.toLowerCase())
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
    }
  }
  return best
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps. */
function editDistance(a: string, b: string): number {
  // Three rolling rows: the swap rule looks two rows back.
  let twoBack: number[] = []
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let distance = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) distance = Math.min(distance, (twoBack[j - 2] ?? 0) + 1)
      current.push(distance)
    }
    twoBack = previous
    previous = current
  }
  return previous[b.length] ?? 0
}
