/**
 * The header cells of a small table inside a card (an agent's devices, a delivery's headers): unframed, each
 * column spaced from the next. `padding` is the rows' own vertical padding, so headers line up with them.
 */
export function InlineColumnHeaders({
  names,
  padding,
}: {
  names: readonly string[];
  padding: "py-1" | "py-0.5";
}) {
  return names.map((name, at) => (
    <th key={name} scope="col" className={`${padding} ${at < names.length - 1 ? "pr-3 " : ""}font-medium`}>
      {name}
    </th>
  ));
}
