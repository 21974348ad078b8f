// Decode never lets a payload through that Postgres cannot store (it would make its batch fail to
// commit on every re-run): NUL characters and unpaired UTF-16 surrogates become dead letters with a
// reason; everything else that is a JSON object decodes unchanged.
import { describe, expect, it } from "vitest";
import { decodeJson } from "./decode";

const rec = (text: string) => ({
  partition: 0,
  offset: 0,
  key: null,
  value: Buffer.from(text, "utf8"),
  timestamp: 0,
});

describe("decodeJson", () => {
  it("decodes a JSON object, surrogate pairs and literal backslash-u text included", () => {
    expect(decodeJson(rec('{"a":"\\ud83d\\ude00","b":"\\\\ud800","c":1}'))).toEqual({
      ok: true,
      value: { a: "😀", b: "\\ud800", c: 1 },
    });
  });

  it("turns an unpaired surrogate into a dead letter with the reason", () => {
    for (const text of ['{"a":"\\ud800"}', '{"a":"x\\udfff"}', '{"\\udc00":1}', '{"a":"\\\\\\ud800"}']) {
      const d = decodeJson(rec(text));
      expect(d.ok, text).toBe(false);
      if (!d.ok) expect(d.reason).toContain("unpaired UTF-16 surrogate");
    }
  });

  it("turns NUL, non-objects and invalid JSON into dead letters", () => {
    expect(decodeJson(rec('{"a":"\\u0000"}'))).toMatchObject({
      ok: false,
      reason: expect.stringContaining("NUL"),
    });
    expect(decodeJson(rec("[1]"))).toMatchObject({ ok: false, reason: expect.stringContaining("an array") });
    expect(decodeJson(rec("{"))).toMatchObject({
      ok: false,
      reason: expect.stringContaining("not valid JSON"),
    });
    expect(decodeJson({ ...rec(""), value: null })).toMatchObject({
      ok: false,
      reason: expect.stringContaining("empty payload"),
    });
  });
});
