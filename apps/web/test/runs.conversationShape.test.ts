import { describe, expect, it } from "vitest";
import { conversationShape, speakerLabel, speakers } from "../src/features/runs/lib/conversationShape";

const m = (actor: string, role = "assistant") => ({ actor, role });

/** A transcript row shows the conversation's shape, and the prompt is named by its role, not its dataset. */
describe("speakerLabel", () => {
  it("labels the prompt by role and keeps its dataset as the source", () => {
    expect(speakerLabel(m("letters", "user"))).toEqual({ name: "user", source: "letters" });
    expect(speakerLabel(m("student"))).toEqual({ name: "student", source: null });
    expect(speakerLabel(m("sandbox", "environment"))).toEqual({ name: "sandbox", source: null });
  });
});

describe("conversationShape", () => {
  it("lists the speakers of the turns, system prompts left out, with the turn count", () => {
    const messages = [m("student", "system"), m("letters", "user"), m("student"), m("partner"), m("student")];
    expect(speakers(messages)).toEqual(["user", "student", "partner", "student"]);
    expect(conversationShape(messages)).toEqual({ turns: 4, text: "user → student → partner → student" });
  });

  it("writes a repeated exchange once with its count, and a speaker repeated in a row as name×n", () => {
    const debate = [m("topics", "user"), ...Array.from({ length: 5 }, () => [m("alice"), m("bob")]).flat()];
    expect(conversationShape(debate)).toEqual({ turns: 11, text: "user → (alice → bob)×5" });
    expect(conversationShape([m("letters", "user"), m("student"), m("student"), m("student")])).toEqual({ turns: 4, text: "user → student×3" });
  });

  it("cuts a long irregular conversation in the middle and says when there are no turns", () => {
    const names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
    const shape = conversationShape([m("letters", "user"), ...names.map((n) => m(n))]);
    expect(shape.turns).toBe(10);
    expect(shape.text).toBe("user → a → b → c → d → … → i");
    expect(conversationShape([m("student", "system")])).toEqual({ turns: 0, text: "(no turns)" });
  });
});
