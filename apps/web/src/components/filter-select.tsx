// A labelled <select> that narrows a list: "all" (the empty value) first, then the choices. The one
// shape the fleet, the Alerts page and the dead letters filter with, so they read and behave alike.
export function FilterSelect<T extends string>({
  label,
  value,
  onChange,
  options,
  name,
  ariaLabel,
  allLabel = "all",
}: {
  label: string;
  value: T | "";
  onChange: (value: T | "") => void;
  /** [value, shown text] pairs, or plain values shown as they are. */
  options: readonly (T | readonly [T, string])[];
  name?: string;
  ariaLabel?: string;
  allLabel?: string;
}) {
  return (
    <label>
      {label}{" "}
      <select
        name={name}
        value={value}
        onChange={(e) => onChange(e.target.value as T | "")}
        aria-label={ariaLabel}
      >
        <option value="">{allLabel}</option>
        {options.map((o) => {
          const [v, text] = typeof o === "string" ? [o, o] : o;
          return (
            <option key={v} value={v}>
              {text}
            </option>
          );
        })}
      </select>
    </label>
  );
}
