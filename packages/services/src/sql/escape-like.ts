// Text a person types into a "contains" filter is matched literally: % and _ are LIKE's wildcards, so
// they (and the escape character itself) are escaped before the text becomes a pattern. Prisma's
// `contains` / `startsWith` pass the value into LIKE as-is, so every such filter goes through here.

/** The text with LIKE's wildcards escaped (backslash, Postgres' default escape character). */
export const escapeLike = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);
