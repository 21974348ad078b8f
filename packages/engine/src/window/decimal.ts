// Exact decimal arithmetic for sums and averages of `decimal` fields: amounts are added as scaled
// integers (BigInt), never as binary floating point, so 0.10 + 0.20 is exactly 0.30 — the same
// result Postgres' numeric gives for the same rows.

export interface Decimal {
  /** The value times 10^scale. */
  units: bigint;
  scale: number;
}

const DECIMAL_TEXT = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

export function parseDecimal(value: unknown): Decimal {
  const text =
    typeof value === "string" ? value.trim() : typeof value === "bigint" ? value.toString() : String(value);
  const m = DECIMAL_TEXT.exec(text);
  if (!m || (m[2] === "" && (m[3] ?? "") === ""))
    throw new RangeError(`not a decimal: ${JSON.stringify(text)}`);
  const [, sign = "", whole = "", fraction = "", exponent = "0"] = m;
  let units = BigInt(`${whole}${fraction}` || "0");
  let scale = fraction.length - Number(exponent);
  if (scale < 0) {
    units *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { units: sign === "-" ? -units : units, scale };
}

function rescale(d: Decimal, scale: number): bigint {
  return d.units * 10n ** BigInt(scale - d.scale);
}

export function addDecimal(a: Decimal, b: Decimal): Decimal {
  const scale = Math.max(a.scale, b.scale);
  return { units: rescale(a, scale) + rescale(b, scale), scale };
}

export function compareDecimal(a: Decimal, b: Decimal): number {
  const scale = Math.max(a.scale, b.scale);
  const [x, y] = [rescale(a, scale), rescale(b, scale)];
  return x < y ? -1 : x > y ? 1 : 0;
}

/** a / n rounded half away from zero to `scale` fraction digits. */
export function divideDecimal(a: Decimal, n: number, scale: number): Decimal {
  const numerator = a.units * 10n ** BigInt(Math.max(0, scale - a.scale) + 1);
  const shift = Math.max(0, a.scale - scale);
  const q = numerator / (BigInt(n) * 10n ** BigInt(shift));
  const rounded = (q + (q >= 0n ? 5n : -5n)) / 10n;
  return { units: rounded, scale: Math.max(scale, 0) };
}

export function formatDecimal(d: Decimal): string {
  const negative = d.units < 0n;
  const digits = (negative ? -d.units : d.units).toString().padStart(d.scale + 1, "0");
  const whole = digits.slice(0, digits.length - d.scale);
  const fraction = digits.slice(digits.length - d.scale);
  return `${negative ? "-" : ""}${whole}${d.scale > 0 ? `.${fraction}` : ""}`;
}

/** One text per numeric value: "1.50", "1.5" and "15e-1" are the same decimal. */
export function canonicalDecimal(value: unknown): string {
  const d = parseDecimal(value);
  let { units, scale } = d;
  while (scale > 0 && units % 10n === 0n) {
    units /= 10n;
    scale--;
  }
  return formatDecimal({ units, scale });
}
