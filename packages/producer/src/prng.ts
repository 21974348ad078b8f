// A small seeded PRNG so that a seed plus options always yields the same stream: tests compare runs
// byte for byte, and a benchmark or a failing demo can be replayed exactly. Math.random cannot be seeded.
//
// xoshiro128** (Blackman & Vigna): 128-bit state, period 2^128 - 1, good statistical quality, and only
// 32-bit integer ops, which JavaScript does exactly with `Math.imul` and `>>> 0`. The state is filled by
// hashing the seed (cyrb128), so nearby seeds (1, 2, 3) give unrelated streams.

export type Seed = number | string;

/** cyrb128: a fast non-cryptographic string hash giving four 32-bit words. */
function cyrb128(text: string): [number, number, number, number] {
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

export class Prng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  /** Prefer `Prng.from(seed)`; `label` names the seed for `fork`. */
  private constructor(readonly label: string) {
    [this.s0, this.s1, this.s2, this.s3] = cyrb128(label);
    // An all-zero state would only ever produce zeros; cyrb128 makes it practically impossible, but be sure.
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 0x9e3779b9;
  }

  /** Seeds are compared as text: 42 and "42" give the same stream. */
  static from(seed: Seed): Prng {
    return new Prng(String(seed));
  }

  /**
   * An independent generator derived from this one's seed and a name. Each concern (base events,
   * duplicates, lateness, ...) draws from its own fork, so turning one knob does not shift the random
   * numbers every other concern sees. Depends only on the seed and name, not on how far this one has run.
   */
  fork(name: string): Prng {
    return new Prng(`${this.label}/${name}`);
  }

  /** Uniform 32-bit unsigned integer. */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform float in [0, 1) with 32 bits of randomness. */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform integer in [min, max] (both inclusive). */
  int(min: number, max: number): number {
    if (!Number.isInteger(min) || !Number.isInteger(max) || max < min) {
      throw new RangeError(`int(${min}, ${max}): need integers with min <= max`);
    }
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** Uniform float in [min, max). */
  float(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  /** True with probability p: chance(0) is never true, chance(1) always is. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError("pick from an empty list");
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** Standard normal variate (Box-Muller); used for log-normal payment amounts. */
  normal(): number {
    const u = 1 - this.next(); // (0, 1], so log(u) is finite
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** `length` lowercase hex characters. */
  hex(length: number): string {
    let out = "";
    while (out.length < length) out += this.nextUint32().toString(16).padStart(8, "0");
    return out.slice(0, length);
  }
}

/**
 * Picks an index with probability proportional to its weight in O(log n), for merchant popularity
 * and event-type mixes.
 */
export class WeightedPicker {
  private readonly cumulative: number[];
  private readonly total: number;

  constructor(weights: readonly number[]) {
    let sum = 0;
    this.cumulative = weights.map((w) => {
      if (!(w >= 0) || !Number.isFinite(w)) throw new RangeError(`weights must be finite and >= 0, got ${w}`);
      sum += w;
      return sum;
    });
    if (!(sum > 0)) throw new RangeError("at least one weight must be positive");
    this.total = sum;
  }

  pick(rng: Prng): number {
    const target = rng.next() * this.total;
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.cumulative[mid] as number) > target) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}
