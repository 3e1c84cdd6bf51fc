/**
 * The graph form the visual editor draws: a `start` node with one edge to the root, then
 * one node per tree node, edges from parent to child carrying the child's position
 * (`order`) and, out of a choice, its `weight`. Any actor is an actor node named `*`.
 *
 * Ids: the start node is always "start". toGraph uses an AST node's `id` when it has one,
 * otherwise its canonical id `n<k>` (k = 1-based pre-order index). fromGraph keeps a
 * graph id on the AST node only when it differs from the canonical one. So
 * fromGraph(toGraph(ast)) deep-equals ast (spans travel as node `span`), and
 * toGraph(fromGraph(graph)) equals graph with its arrays in pre-order.
 */
import { z } from "zod";
import { ACTOR_NAME, MAX_COUNT, MAX_DEPTH, MAX_WEIGHT, type Node, type Span } from "./ast";

const PositionSchema = z.object({ offset: z.number().int().min(0), line: z.number().int().min(1), column: z.number().int().min(1) }).strict();
const SpanSchema = z.object({ start: PositionSchema, end: PositionSchema }).strict();
const Id = z.string().min(1);
const Count = z.number().int().min(0).max(MAX_COUNT);

export const GraphNodeSchema = z.discriminatedUnion("kind", [
  z.object({ id: Id, kind: z.literal("start") }).strict(),
  z.object({ id: Id, kind: z.literal("actor"), name: z.string(), span: SpanSchema.optional() }).strict(),
  z.object({ id: Id, kind: z.literal("sequence"), span: SpanSchema.optional() }).strict(),
  z.object({ id: Id, kind: z.literal("choice"), span: SpanSchema.optional() }).strict(),
  z.object({ id: Id, kind: z.literal("parallel"), span: SpanSchema.optional() }).strict(),
  z.object({ id: Id, kind: z.literal("repeat"), min: Count, max: Count, span: SpanSchema.optional() }).strict(),
]);

export const GraphEdgeSchema = z
  .object({ from: Id, to: Id, order: z.number().int().min(0), weight: z.number().int().min(1).max(MAX_WEIGHT).optional() })
  .strict();

export const GraphSchema = z.object({ nodes: z.array(GraphNodeSchema), edges: z.array(GraphEdgeSchema) }).strict();

export type GraphNode = z.infer<typeof GraphNodeSchema>;
export type GraphEdge = z.infer<typeof GraphEdgeSchema>;
export type Graph = z.infer<typeof GraphSchema>;

export const START_ID = "start";

/** A graph that is not a well-formed spec tree; `issues` name the nodes at fault. */
export class GraphError extends Error {
  constructor(readonly issues: string[]) {
    super(`invalid round-spec graph: ${issues.join("; ")}`);
    this.name = "GraphError";
  }
}

export function toGraph(ast: Node): Graph {
  const taken = new Set<string>([START_ID]);
  collectIds(ast, taken);
  const nodes: GraphNode[] = [{ id: START_ID, kind: "start" }];
  const edges: GraphEdge[] = [];
  let index = 0;

  const visit = (node: Node): string => {
    index += 1;
    const id = node.id ?? freshId(`n${index}`, taken);
    const span = node.span ? { span: node.span } : {};
    switch (node.type) {
      case "actor":
        nodes.push({ id, kind: "actor", name: node.name, ...span });
        break;
      case "any":
        nodes.push({ id, kind: "actor", name: "*", ...span });
        break;
      case "repeat":
        nodes.push({ id, kind: "repeat", min: node.min, max: node.max, ...span });
        break;
      default:
        nodes.push({ id, kind: node.type, ...span });
    }
    if (node.type === "choice") {
      node.options.forEach((o, order) => edges.push({ from: id, to: visit(o.node), order, weight: o.weight }));
    } else {
      const children = node.type === "sequence" ? node.items : node.type === "parallel" ? node.branches : node.type === "repeat" ? [node.body] : [];
      children.forEach((child, order) => edges.push({ from: id, to: visit(child), order }));
    }
    return id;
  };
  edges.push({ from: START_ID, to: visit(ast), order: 0 });
  // Edges were pushed children-first; put them in pre-order of their target, like the nodes.
  const rank = new Map(nodes.map((n, i) => [n.id, i]));
  edges.sort((a, b) => rank.get(a.to)! - rank.get(b.to)!);
  return { nodes, edges };
}

function collectIds(node: Node, taken: Set<string>): void {
  if (node.id !== undefined) taken.add(node.id);
  const children = node.type === "sequence" ? node.items : node.type === "choice" ? node.options.map((o) => o.node) : node.type === "parallel" ? node.branches : node.type === "repeat" ? [node.body] : [];
  for (const child of children) collectIds(child, taken);
}

/** The canonical id, unless an explicit id already uses it. */
function freshId(canonical: string, taken: Set<string>): string {
  let id = canonical;
  while (taken.has(id)) id += "'";
  taken.add(id);
  return id;
}

export function fromGraph(input: unknown): Node {
  const parsed = GraphSchema.safeParse(input);
  if (!parsed.success) {
    throw new GraphError(parsed.error.issues.map((i) => `${i.path.join(".") || "graph"}: ${i.message}`));
  }
  const { nodes, edges } = parsed.data;
  const issues: string[] = [];
  const byId = new Map<string, GraphNode>();
  for (const node of nodes) {
    if (byId.has(node.id)) issues.push(`node id "${node.id}" is used twice`);
    byId.set(node.id, node);
  }
  const starts = nodes.filter((n) => n.kind === "start");
  if (starts.length !== 1) issues.push(`a graph needs exactly one start node, found ${starts.length}`);
  else if (starts[0]!.id !== START_ID) issues.push(`the start node's id must be "${START_ID}", found "${starts[0]!.id}"`);

  const children = new Map<string, GraphEdge[]>();
  const parents = new Map<string, number>();
  for (const edge of edges) {
    if (!byId.has(edge.from)) issues.push(`edge ${edge.from} -> ${edge.to}: no node "${edge.from}"`);
    if (!byId.has(edge.to)) issues.push(`edge ${edge.from} -> ${edge.to}: no node "${edge.to}"`);
    children.set(edge.from, [...(children.get(edge.from) ?? []), edge]);
    parents.set(edge.to, (parents.get(edge.to) ?? 0) + 1);
  }
  for (const node of nodes) {
    const count = parents.get(node.id) ?? 0;
    if (node.kind === "start" && count > 0) issues.push(`the start node cannot have incoming edges`);
    if (node.kind !== "start" && count !== 1) issues.push(`node "${node.id}" must have exactly one parent, has ${count}`);
    issues.push(...nodeIssues(node, children.get(node.id) ?? [], byId));
  }
  if (issues.length > 0) throw new GraphError(issues);

  // Now a forest where every non-start node has one parent; build from start and check that all nodes are reached.
  const seen = new Set<string>();
  let index = 0;
  const build = (id: string, depth: number): Node => {
    if (depth > MAX_DEPTH) throw new GraphError([`node "${id}" is nested deeper than ${MAX_DEPTH} levels`]);
    seen.add(id);
    index += 1;
    const canonical = `n${index}`;
    const g = byId.get(id)!;
    const kids = [...(children.get(id) ?? [])].sort((a, b) => a.order - b.order);
    const meta: { id?: string; span?: Span } = {};
    if (id !== canonical) meta.id = id;
    if ("span" in g && g.span) meta.span = g.span;
    switch (g.kind) {
      case "actor":
        return g.name === "*" ? { type: "any", ...meta } : { type: "actor", name: g.name, ...meta };
      case "repeat":
        return { type: "repeat", body: build(kids[0]!.to, depth + 1), min: g.min, max: g.max, ...meta };
      case "sequence":
        return { type: "sequence", items: kids.map((k) => build(k.to, depth + 1)), ...meta };
      case "parallel":
        return { type: "parallel", branches: kids.map((k) => build(k.to, depth + 1)), ...meta };
      case "choice":
        return { type: "choice", options: kids.map((k) => ({ node: build(k.to, depth + 1), weight: k.weight! })), ...meta };
      case "start":
        throw new GraphError([`node "${id}": the start node cannot be a child`]);
    }
  };
  const root = build(children.get(START_ID)![0]!.to, 1);
  const unreached = nodes.filter((n) => n.kind !== "start" && !seen.has(n.id)).map((n) => `"${n.id}"`);
  if (unreached.length > 0) throw new GraphError([`nodes not reachable from start (a cycle?): ${unreached.join(", ")}`]);
  return root;
}

const ARITY: Record<GraphNode["kind"], [number, number]> = {
  start: [1, 1],
  actor: [0, 0],
  repeat: [1, 1],
  sequence: [2, Infinity],
  choice: [2, Infinity],
  parallel: [2, Infinity],
};

function nodeIssues(node: GraphNode, out: GraphEdge[], byId: Map<string, GraphNode>): string[] {
  const issues: string[] = [];
  const [least, most] = ARITY[node.kind];
  const where = `node "${node.id}" (${node.kind})`;
  if (out.length < least || out.length > most) {
    const want = least === most ? `${least}` : `at least ${least}`;
    issues.push(`${where} needs ${want} ${least === 1 && most === 1 ? "child" : "children"}, has ${out.length}`);
  }
  const orders = out.map((e) => e.order).sort((a, b) => a - b);
  if (orders.some((o, i) => o !== i)) issues.push(`${where}: child orders must be 0..${out.length - 1}, found ${orders.join(", ")}`);
  for (const edge of out) {
    if (node.kind === "choice" && edge.weight === undefined) issues.push(`${where}: edge to "${edge.to}" needs a weight`);
    if (node.kind !== "choice" && edge.weight !== undefined) issues.push(`${where}: only edges out of a choice carry a weight`);
    if (byId.get(edge.to)?.kind === "start") issues.push(`${where}: the start node cannot be a child`);
  }
  if (node.kind === "actor" && node.name !== "*" && !ACTOR_NAME.test(node.name)) {
    issues.push(`${where}: "${node.name}" is not a valid actor name`);
  }
  if (node.kind === "repeat" && (node.min > node.max || node.max < 1)) {
    issues.push(`${where}: needs 0 <= min <= max and max >= 1, found min ${node.min}, max ${node.max}`);
  }
  return issues;
}
