/** A repeatable option whose values may also be separated by commas: `--plan a --plan b,c` is [a, b, c]. */
export const collect = (value: string, previous: string[]) => [
  ...previous,
  ...value
    .split(",")
    .map((v) => v.trim())
    .filter(Boolean),
];
