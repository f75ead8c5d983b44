/** A plist value we read: strings, integers and booleans; anything else (arrays, dates, data) is null. */
export type PlistScalar = string | number | boolean | null;
