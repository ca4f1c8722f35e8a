/**
 * The one seeded random source of the tests, the fakes, the demo and the benchmarks: mulberry32, a
 * 32-bit generator that is small, fast and good enough for test data (not for anything secret).
 * The same seed always gives the same sequence, so a failing draw can be replayed from its seed.
 *
 * @since 0.1.0
 */

/**
 * A seeded source.
 *
 * - `next()`: a float in [0, 1).
 * - `int(min, max)`: an integer in [min, max], both included.
 * - `pick(xs)`: one element of a non-empty array.
 * - `chars(alphabet, n)`: `n` characters drawn from `alphabet`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Random {
  readonly next: () => number
  readonly int: (min: number, max: number) => number
  readonly pick: <A>(xs: ReadonlyArray<A>) => A
  readonly chars: (alphabet: string, n: number) => string
}

/**
 * `A`–`Z`, `a`–`z`, `0`–`9`: the alphabet of provider ids.
 *
 * @since 0.1.0
 * @category constants
 */
export const alphanumeric = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

/**
 * A source seeded with `seed` (taken modulo 2³²).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (seed: number): Random => {
  let a = seed >>> 0
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1))
  const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(next() * xs.length)]!
  const chars = (alphabet: string, n: number): string => {
    let s = ""
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(next() * alphabet.length)]
    return s
  }
  return { next, int, pick, chars }
}

/**
 * A stable seed for a name (FNV-1a, 32 bits): one reproducible draw per test case.
 *
 * @since 0.1.0
 * @category constructors
 */
export const seedOf = (name: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193)
  return h >>> 0
}
