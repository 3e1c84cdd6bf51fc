import { parse, toGraph, type Graph, type Node } from "@troupe/dsl";

/**
 * A transcript placed on its environment's round spec: which node of the spec's graph (the designer's
 * `toGraph` form, so the same ids the designer draws) each spoken turn came from. The transcript records
 * who spoke, not which branch of a choice or which iteration of a repeat produced the turn, so the turns
 * are matched against the spec the way a regular expression matches a string: the first reading (choices
 * in their order, repeats as few as the rest allows) that accounts for every turn. `(a/b)*3` answered
 * `b a b` maps turn 0 to `b`'s node, turn 1 to `a`'s, turn 2 to `b`'s again.
 */

/** One spoken message of a transcript as the mapping reads it (prompt, system and environment messages are not spec turns). */
export interface TurnMessage {
  actor: string;
  role: string;
  content: string;
  turn?: number;
  reward?: number;
  advantage?: number;
}

/** A spoken turn placed on a node: the message's index in the transcript and its turn index. */
export interface PlacedTurn {
  /** Index of the message in the transcript's `messages`. */
  message: number;
  /** The message's recorded turn index (its place in the conversation), or its order among spoken turns. */
  turn: number;
  actor: string;
  nodeId: string;
}

export interface TurnMapping {
  graph: Graph;
  /** Every spoken turn, in order, with its node; `unplaced` lists those no reading of the spec explains. */
  placed: PlacedTurn[];
  /** Message indices of spoken turns past what the spec explains (a transcript that does not fit it). */
  unplaced: number[];
  /** The transcript reads as the whole spec (false: as a prefix of it, e.g. a conversation cut short). */
  complete: boolean;
}

/** Spoken turns: the actors' messages (role `assistant`), in order. */
export function spokenTurns(messages: readonly TurnMessage[]): { message: number; turn: number; actor: string }[] {
  const out: { message: number; turn: number; actor: string }[] = [];
  messages.forEach((m, i) => {
    if (m.role === "assistant") out.push({ message: i, turn: m.turn ?? out.length, actor: m.actor });
  });
  return out;
}

/** Each AST node's graph id, as `toGraph` assigns them (pre-order; the graph's nodes after `start` are in that order). */
function graphIds(ast: Node, graph: Graph): Map<Node, string> {
  const ids = new Map<Node, string>();
  let k = 1;
  const visit = (node: Node) => {
    ids.set(node, graph.nodes[k++]!.id);
    const kids = node.type === "sequence" ? node.items : node.type === "choice" ? node.options.map((o) => o.node) : node.type === "parallel" ? node.branches : node.type === "repeat" ? [node.body] : [];
    kids.forEach(visit);
  };
  visit(ast);
  return ids;
}

/** A partial reading: where it ends among the spoken turns and the node of each turn it consumed (in order). */
interface Reading {
  end: number;
  nodes: string[];
}

/** Matching is a search; a pathological spec stops after this many steps with the best prefix found. */
const BUDGET = 200_000;

/**
 * Map a transcript's spoken turns onto the round spec's graph. Returns null when the spec text does not
 * parse (nothing to draw on). A transcript that reads as only a prefix of the spec (cut short) maps the
 * turns it has; turns past any reading are `unplaced`.
 */
export function mapTurns(roundSpec: string, messages: readonly TurnMessage[]): TurnMapping | null {
  const parsed = parse(roundSpec);
  if (!parsed.ok) return null;
  const ast = parsed.ast;
  const graph = toGraph(ast);
  const ids = graphIds(ast, graph);
  const turns = spokenTurns(messages);
  const speakers = turns.map((t) => t.actor);
  let budget = BUDGET;
  let best: Reading = { end: 0, nodes: [] };

  // Every reading of `node` starting at `pos`, lazily, in preference order.
  function* read(node: Node, pos: number): Generator<Reading> {
    if (--budget < 0) return;
    switch (node.type) {
      case "actor":
      case "any":
        if (pos < speakers.length && (node.type === "any" || speakers[pos] === node.name)) yield { end: pos + 1, nodes: [ids.get(node)!] };
        return;
      case "sequence":
        yield* readAll(node.items, 0, pos);
        return;
      case "choice":
        for (const o of node.options) yield* read(o.node, pos);
        return;
      case "parallel":
        // The branches' turns are recorded one message each, in branch order.
        yield* readAll(node.branches, 0, pos);
        return;
      case "repeat":
        yield* repeat(node, 0, pos);
        return;
    }
  }

  function* readAll(items: readonly Node[], i: number, pos: number): Generator<Reading> {
    if (i === items.length) {
      yield { end: pos, nodes: [] };
      return;
    }
    for (const head of read(items[i]!, pos)) for (const rest of readAll(items, i + 1, head.end)) yield { end: rest.end, nodes: [...head.nodes, ...rest.nodes] };
  }

  function* repeat(node: Extract<Node, { type: "repeat" }>, done: number, pos: number): Generator<Reading> {
    if (done >= node.min) yield { end: pos, nodes: [] };
    if (done >= node.max) return;
    for (const once of read(node.body, pos)) {
      // An iteration that speaks no turn cannot help past the minimum (and would loop).
      if (once.end === pos && done >= node.min) continue;
      for (const more of repeat(node, done + 1, once.end)) yield { end: more.end, nodes: [...once.nodes, ...more.nodes] };
    }
  }

  let complete = false;
  for (const r of read(ast, 0)) {
    if (r.end === speakers.length) {
      best = r;
      complete = true;
      break;
    }
    if (r.end > best.end) best = r;
  }
  if (!complete) best = longestPrefix(ast, ids, speakers, best);
  const placed = best.nodes.map((nodeId, k) => ({ ...turns[k]!, nodeId }));
  return { graph, placed, unplaced: turns.slice(best.nodes.length).map((t) => t.message), complete };
}

/**
 * A transcript cut short reads as a prefix of the spec: the longest prefix of its turns that some reading
 * of the spec begins with. Found by trying ever shorter transcripts against the spec with an open end.
 */
function longestPrefix(ast: Node, ids: Map<Node, string>, speakers: readonly string[], fallback: Reading): Reading {
  for (let n = speakers.length; n > fallback.nodes.length; n--) {
    const found = readPrefix(ast, ids, speakers.slice(0, n));
    if (found) return found;
  }
  return fallback;
}

/** A reading of the spec whose turns begin with `speakers` (the spec may go on after them), or null. */
function readPrefix(ast: Node, ids: Map<Node, string>, speakers: readonly string[]): Reading | null {
  let budget = BUDGET;
  // As `read`, but reaching the end of the speakers ends every reading successfully (the rest was not spoken).
  function* read(node: Node, pos: number): Generator<Reading> {
    if (--budget < 0) return;
    if (pos === speakers.length) {
      yield { end: pos, nodes: [] };
      return;
    }
    switch (node.type) {
      case "actor":
      case "any":
        if (node.type === "any" || speakers[pos] === node.name) yield { end: pos + 1, nodes: [ids.get(node)!] };
        return;
      case "sequence":
      case "parallel":
        yield* readAll(node.type === "sequence" ? node.items : node.branches, 0, pos);
        return;
      case "choice":
        for (const o of node.options) yield* read(o.node, pos);
        return;
      case "repeat":
        yield* repeat(node, 0, pos);
        return;
    }
  }
  function* readAll(items: readonly Node[], i: number, pos: number): Generator<Reading> {
    if (i === items.length || pos === speakers.length) {
      yield { end: pos, nodes: [] };
      return;
    }
    for (const head of read(items[i]!, pos)) for (const rest of readAll(items, i + 1, head.end)) yield { end: rest.end, nodes: [...head.nodes, ...rest.nodes] };
  }
  function* repeat(node: Extract<Node, { type: "repeat" }>, done: number, pos: number): Generator<Reading> {
    if (done >= node.min || pos === speakers.length) yield { end: pos, nodes: [] };
    if (done >= node.max || pos === speakers.length) return;
    for (const once of read(node.body, pos)) {
      if (once.end === pos) continue;
      for (const more of repeat(node, done + 1, once.end)) yield { end: more.end, nodes: [...once.nodes, ...more.nodes] };
    }
  }
  for (const r of read(ast, 0)) if (r.end === speakers.length) return r;
  return null;
}

/** The turns placed on each node, in order: what the graph draws at that node. */
export function turnsByNode(mapping: TurnMapping): Map<string, PlacedTurn[]> {
  const out = new Map<string, PlacedTurn[]>();
  for (const p of mapping.placed) out.set(p.nodeId, [...(out.get(p.nodeId) ?? []), p]);
  return out;
}

/** A short excerpt of a message for a node: one line, at most `max` characters. */
export function excerpt(text: string, max = 40): string {
  const line = text.replace(/\s+/g, " ").trim();
  if (line === "") return "(empty)";
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

/** Each environment's round spec in a frozen run spec, by environment name (read defensively: old specs vary). */
export function roundSpecsOf(spec: unknown): Record<string, string> {
  const envs = typeof spec === "object" && spec !== null ? (spec as { environments?: unknown }).environments : undefined;
  const out: Record<string, string> = {};
  if (!Array.isArray(envs)) return out;
  for (const e of envs) {
    if (typeof e !== "object" || e === null) continue;
    const { name, roundSpec } = e as { name?: unknown; roundSpec?: unknown };
    if (typeof name === "string" && typeof roundSpec === "string" && roundSpec.trim() !== "") out[name] = roundSpec;
  }
  return out;
}
