// Where in the spec a line of YAML is, for the editor's hover docs and completions: the section path
// of the key on that line ("source.kafka", "expectations[]"), read from indentation alone — the text
// is often invalid while being typed, so no parser is asked. Block style only (flow maps on one line
// get no hover).

const KEY = /^(\s*)(- )?([A-Za-z_][\w-]*)?(:)?/;

interface TLineKey {
  /** Column of the key itself (after any "- "). */
  indent: number;
  dash: boolean;
  key: string | undefined;
  hasColon: boolean;
}

function lineKey(line: string): TLineKey | undefined {
  const m = KEY.exec(line);
  if (!m) return undefined;
  return {
    indent: m[1]!.length + (m[2] ? 2 : 0),
    dash: m[2] !== undefined,
    key: m[3],
    hasColon: m[4] !== undefined,
  };
}

/** The section the key on line `index` (0-based) belongs to; undefined when the line has no key. */
export function sectionAt(
  lines: readonly string[],
  index: number,
  opts: { partial?: boolean } = {},
): string | undefined {
  const me = lineKey(lines[index] ?? "");
  if (!me || (!opts.partial && (!me.key || !me.hasColon))) return undefined;
  let level = me.indent;
  let inList = me.dash;
  const parts: string[] = [];
  for (let j = index - 1; j >= 0 && level > 0; j--) {
    const k = lineKey(lines[j]!);
    if (!k?.key || !k.hasColon || lines[j]!.trim().startsWith("#")) continue;
    if (k.indent === level && k.dash) inList = true;
    if (k.indent < level) {
      parts.unshift(k.key + (inList ? "[]" : ""));
      level = k.indent;
      inList = k.dash;
    }
  }
  return parts.join(".");
}

/** The key written on a line, if any. */
export function keyAt(line: string): string | undefined {
  const k = lineKey(line);
  return k?.key && k.hasColon ? k.key : undefined;
}

/** Whether the cursor is inside an expression (expr, filter, deleteWhen, a measure) on this line. */
export function inExpression(lineBeforeCursor: string, section: string | undefined): boolean {
  return (
    /\b(expr|filter|deleteWhen)\s*:/.test(lineBeforeCursor) ||
    (section === "aggregate.measures" && /:\s*\S*/.test(lineBeforeCursor))
  );
}
