/**
 * A configured duration (a gate's expiry, a hook's rate window, a burst window) in the largest whole unit it is a
 * multiple of: "2 h", "90 s". With `largest: 'h'` a day stays "24 h" (the notification texts and page say so).
 */
export function durationWords(seconds: number, largest: 'd' | 'h' = 'd'): string {
  if (largest === 'd' && seconds % 86_400 === 0) return `${seconds / 86_400} d`;
  if (seconds % 3_600 === 0) return `${seconds / 3_600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}
