// formatDate: a Unicode TR35 date pattern ("EEEE, MMMM d", "h:mm a", "yyyy-MM-dd") applied to a
// date, with month and weekday names, day periods and the clock read through Intl in the
// viewer's locale and time zone (or those the host gives). "ISO" gives the ISO 8601 instant.
// Text in single quotes is literal ('' is a quote); letters outside quotes are fields.

/** @typedef {{ locale?: string, timeZone?: string }} DateEnv */

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const MAX_PATTERN = 200;

/** A Date from an ISO string, epoch milliseconds or a Date; null when it is none of those. */
export function toDate(/** @type {unknown} */ value) {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value;
  if (typeof value === "number") return Number.isFinite(value) ? new Date(value) : null;
  if (typeof value !== "string" || !value.trim()) return null;
  const day = DATE_ONLY.exec(value.trim());
  // A calendar date names a day, not an instant: it stays that day in every time zone.
  if (day) return new Date(Date.UTC(Number(day[1]), Number(day[2]) - 1, Number(day[3]), 12));
  const d = new Date(value.trim());
  return Number.isNaN(d.getTime()) ? null : d;
}

/**
 * @param {unknown} value
 * @param {string} pattern
 * @param {DateEnv} [env]
 */
export function formatDate(value, pattern, env = {}) {
  const date = toDate(value);
  if (!date) return "";
  if (pattern === "ISO") return date.toISOString();
  if (pattern.length > MAX_PATTERN) throw new Error(`The date pattern is longer than ${MAX_PATTERN} characters.`);
  const dateOnly = typeof value === "string" && DATE_ONLY.test(value.trim());
  const opts = { locale: env.locale, timeZone: dateOnly ? "UTC" : env.timeZone };
  const f = fields(date, opts);
  let out = "";
  for (let i = 0; i < pattern.length; ) {
    const ch = pattern[i];
    if (ch === "'") {
      const end = pattern.indexOf("'", i + 1);
      const lit = end < 0 ? pattern.slice(i + 1) : pattern.slice(i + 1, end);
      out += lit === "" ? "'" : lit;
      i = end < 0 ? pattern.length : end + 1;
      continue;
    }
    if (!/[A-Za-z]/.test(ch)) {
      out += ch;
      i++;
      continue;
    }
    let n = 1;
    while (pattern[i + n] === ch) n++;
    out += field(ch, n, f, date, opts);
    i += n;
  }
  return out;
}

/** @param {Date} date @param {{ locale?: string, timeZone?: string }} opts */
function fields(date, opts) {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: opts.timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    second: "numeric",
    weekday: "short",
  }).formatToParts(date);
  /** @type {Record<string, string>} */
  const p = {};
  for (const part of parts) p[part.type] = part.value;
  const weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
  return {
    year: Number(p.year),
    month: Number(p.month),
    day: Number(p.day),
    hour: Number(p.hour) % 24,
    minute: Number(p.minute),
    second: Number(p.second),
    weekday: weekdays.indexOf(p.weekday),
  };
}

const pad = (/** @type {number} */ n, /** @type {number} */ w) => String(n).padStart(w, "0");

/**
 * Text for one field letter repeated `n` times.
 * @param {string} ch @param {number} n @param {ReturnType<typeof fields>} f @param {Date} date
 * @param {{ locale?: string, timeZone?: string }} opts
 */
function field(ch, n, f, date, opts) {
  const name = (/** @type {Intl.DateTimeFormatOptions} */ o) =>
    new Intl.DateTimeFormat(opts.locale, { timeZone: opts.timeZone, ...o }).formatToParts(date).find((x) => x.type === Object.keys(o)[0])?.value ?? "";
  const width = n >= 5 ? "narrow" : n === 4 ? "long" : "short";
  switch (ch) {
    case "y":
    case "Y":
    case "u":
      return n === 2 ? pad(f.year % 100, 2) : pad(f.year, n);
    case "M":
    case "L":
      if (n <= 2) return pad(f.month, n);
      return standaloneMonth(date, width, opts, ch === "L");
    case "d":
      return pad(f.day, n);
    case "E":
    case "c":
    case "e":
      if (ch !== "E" && n <= 2) return String(f.weekday === 0 ? 7 : f.weekday);
      return name({ weekday: width });
    case "a":
    case "b":
    case "B":
      return dayPeriod(date, opts);
    case "h":
      return pad(f.hour % 12 === 0 ? 12 : f.hour % 12, n);
    case "H":
      return pad(f.hour, n);
    case "K":
      return pad(f.hour % 12, n);
    case "k":
      return pad(f.hour === 0 ? 24 : f.hour, n);
    case "m":
      return pad(f.minute, n);
    case "s":
      return pad(f.second, n);
    case "S":
      return pad(date.getUTCMilliseconds(), 3).slice(0, n).padEnd(n, "0");
    case "z":
    case "Z":
    case "O":
    case "v":
    case "V":
    case "X":
    case "x":
      return name({ timeZoneName: n >= 4 ? "long" : "short" });
    default:
      return ch.repeat(n); // an unknown letter stays as written
  }
}

/** The month's name: "MMM" inside a date ("Jan"), "LLL" on its own. */
function standaloneMonth(/** @type {Date} */ date, /** @type {"narrow" | "long" | "short"} */ width, /** @type {any} */ opts, /** @type {boolean} */ alone) {
  const f = new Intl.DateTimeFormat(opts.locale, alone ? { timeZone: opts.timeZone, month: width } : { timeZone: opts.timeZone, month: width, day: "numeric" });
  return f.formatToParts(date).find((x) => x.type === "month")?.value ?? "";
}

/** AM / PM in the locale's words. */
function dayPeriod(/** @type {Date} */ date, /** @type {any} */ opts) {
  const parts = new Intl.DateTimeFormat(opts.locale, { timeZone: opts.timeZone, hour: "numeric", hour12: true }).formatToParts(date);
  return parts.find((x) => x.type === "dayPeriod")?.value ?? "";
}
