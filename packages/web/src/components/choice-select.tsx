import type { ReactNode } from "react";
import { filterControl } from "./control-classes.ts";

/**
 * A compact select of a fixed set of values (a person's role, a webhook's format), each option showing `name`
 * of its value (the value itself by default). `onChange` gets the chosen value, typed as one of `choices`.
 */
export function ChoiceSelect<Choice extends string>({
  id,
  value,
  choices,
  name = (choice) => choice,
  onChange,
}: {
  id: string;
  value: Choice;
  choices: readonly Choice[];
  name?: (choice: Choice) => ReactNode;
  onChange: (value: Choice) => void;
}) {
  return (
    <select
      id={id}
      className={filterControl}
      value={value}
      onChange={(event) => onChange(event.target.value as Choice)}
    >
      {choices.map((choice) => (
        <option key={choice} value={choice}>
          {name(choice)}
        </option>
      ))}
    </select>
  );
}
