import { parser } from "@lezer/python";

/**
 * Syntax errors in a reward's Python source, found in the web app without running Python.
 *
 * Why @lezer/python: the web app never runs Python (user code runs only on a runner, sandboxed),
 * and a launch must be refused before it is queued even when no runner is up, so asking a runner
 * to `compile()` it cannot be the launch check. Lezer's Python grammar (CodeMirror's, maintained
 * with it) parses Python 3 in JavaScript and marks what it cannot parse with error nodes, which
 * give the position. It is a parser, not CPython: it finds unbalanced brackets, broken indentation,
 * missing colons, stray operators and the like, and we add unterminated strings (which lezer
 * tokenises without complaint); semantic errors that `compile()` alone finds (e.g. `return`
 * outside a function) are still reported by the runtime when the run starts.
 */
export interface PythonSyntaxIssue {
  line: number;
  column: number;
  message: string;
}

function position(source: string, offset: number): { line: number; column: number } {
  const before = source.slice(0, offset);
  const line = before.split("\n").length;
  return { line, column: offset - (before.lastIndexOf("\n") + 1) + 1 };
}

/** A string literal's text without its prefix (r, b, f, u…) is closed by the quote it opened with. */
function unterminated(text: string): boolean {
  const body = text.replace(/^[rRbBuUfF]{0,2}/, "");
  const quote = body.startsWith('"""') || body.startsWith("'''") ? body.slice(0, 3) : body.slice(0, 1);
  if (quote !== '"' && quote !== "'" && quote !== '"""' && quote !== "'''") return false;
  return body.length < quote.length * 2 || !body.endsWith(quote) || (quote.length === 1 && body.endsWith(`\\${quote}`) && !body.endsWith(`\\\\${quote}`));
}

export function pythonSyntaxIssues(source: string): PythonSyntaxIssue[] {
  const tree = parser.parse(source);
  const issues: PythonSyntaxIssue[] = [];
  tree.iterate({
    enter: (node) => {
      if (issues.length > 0) return false; // the first error is the one worth reading; later ones follow from it
      if (node.type.isError) {
        const at = position(source, node.from);
        const near = source.slice(node.from, node.from + 20).split("\n")[0]!.trim();
        issues.push({ ...at, message: near ? `invalid Python syntax near \`${near}\`` : "invalid Python syntax (something is missing here)" });
        return false;
      }
      if ((node.name === "String" || node.name === "FormatString") && unterminated(source.slice(node.from, node.to))) {
        issues.push({ ...position(source, node.from), message: "unterminated string literal" });
        return false;
      }
      return undefined;
    },
  });
  return issues;
}

/** Whether the source defines `name` at its top level (a def, an assignment or an import). */
export function definesTopLevel(source: string, name: string): boolean {
  const n = name.replace(/[^A-Za-z0-9_]/g, "");
  return [
    new RegExp(`^(async\\s+)?def\\s+${n}\\s*\\(`, "m"),
    new RegExp(`^${n}\\s*(:[^=\\n]*)?=(?!=)`, "m"),
    new RegExp(`^(from\\s+\\S+\\s+)?import\\s+.*\\b(as\\s+)?${n}\\b`, "m"),
  ].some((re) => re.test(source));
}
