import { describe, expect, it } from "vitest";
import { DslSpecError, compile, parse, stripMeta, type Node } from "../src";
import { Lexer } from "../src/lexer";

function ast(text: string): Node {
  const result = parse(text);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.ast;
}

describe("lexer", () => {
  it("splits names from arrows, ranges from decimals, and skips comments", () => {
    const lexer = new Lexer("Bob->x.y-z*(2..5) # note\n:2.5 -3");
    const kinds: string[] = [];
    for (let t = lexer.next(); t.kind !== "eof"; t = lexer.next()) kinds.push(`${t.kind}:${t.text}`);
    expect(kinds).toEqual([
      "name:Bob", "arrow:->", "name:x.y-z", "star:*", "lparen:(", "number:2", "dotdot:..", "number:5", "rparen:)", "colon::", "number:2.5", "number:-3",
    ]);
  });

  it("puts the end-of-spec token right after the last real token", () => {
    const lexer = new Lexer("A ->   # trailing\n\n");
    lexer.next();
    lexer.next();
    expect(lexer.next().span.start).toEqual({ offset: 4, line: 1, column: 5 });
  });
});

describe("parse", () => {
  it("keeps source spans on every node (parentheses excluded, repeats include their count)", () => {
    const tree = ast("Bob ->\n  (Alice / Carol)*2");
    expect(tree.type).toBe("sequence");
    if (tree.type !== "sequence") return;
    const [bob, repeat] = tree.items;
    expect(bob!.span).toEqual({ start: { offset: 0, line: 1, column: 1 }, end: { offset: 3, line: 1, column: 4 } });
    expect(repeat!.span).toEqual({ start: { offset: 9, line: 2, column: 3 }, end: { offset: 26, line: 2, column: 20 } });
    if (repeat!.type !== "repeat") throw new Error("expected a repeat");
    expect(repeat!.body.span!.start.column).toBe(4);
    expect(tree.span!.end.column).toBe(20);
  });

  it("applies the precedence -> < / < & < *", () => {
    expect(stripMeta(ast("A -> B / C & D*2"))).toEqual({
      type: "sequence",
      items: [
        { type: "actor", name: "A" },
        {
          type: "choice",
          options: [
            { node: { type: "actor", name: "B" }, weight: 1 },
            { node: { type: "parallel", branches: [{ type: "actor", name: "C" }, { type: "repeat", body: { type: "actor", name: "D" }, min: 2, max: 2 }] }, weight: 1 },
          ],
        },
      ],
    });
  });

  it("reports one typed error with its position instead of throwing", () => {
    const result = parse("Bob -> (Alice");
    expect(result).toMatchObject({ ok: false, errors: [{ kind: "unbalanced_paren", line: 1, column: 8 }] });
  });

  it("never takes malformed text as a name", () => {
    for (const text of ["(Bob -> Alice)*3", "Bob*3 -> Alice"]) {
      const names: string[] = [];
      const walk = (n: Node): void => {
        if (n.type === "actor") names.push(n.name);
        if (n.type === "sequence") n.items.forEach(walk);
        if (n.type === "repeat") walk(n.body);
      };
      walk(ast(text));
      expect(names.sort()).toEqual(["Alice", "Bob"]);
    }
    for (const text of ["*3", "Bob*-1", "(Bob", "Alice)", "Bob Alice", "Bob -> 3"]) expect(parse(text).ok, text).toBe(false);
  });

  it("compile throws a DslSpecError carrying the typed errors", () => {
    expect(() => compile("A -> Bbo", { actors: ["A", "Bob"] })).toThrow(DslSpecError);
    try {
      compile("A -> Bbo", { actors: ["A", "Bob"] });
    } catch (e) {
      expect((e as DslSpecError).errors.map((x) => x.kind)).toEqual(["unknown_actor"]);
      expect((e as DslSpecError).message).toContain('1:6: unknown actor "Bbo"; did you mean "Bob"?');
    }
    expect(stripMeta(compile("A*2"))).toEqual({ type: "repeat", body: { type: "actor", name: "A" }, min: 2, max: 2 });
  });
});
