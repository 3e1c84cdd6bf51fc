import { describe, expect, it } from "vitest";
import { deleteConfirmation } from "../src/features/runs/lib/confirmDelete";

/** Deleting a run always asks, naming the run, what is removed, and where its files stay. */
describe("deleteConfirmation", () => {
  it("names the run and its spec, lists the stored data removed, and says where the files stay", () => {
    const q = deleteConfirmation({ name: "brisk-otter-17", specName: "GSM8K demo", runnerId: "gpu-1", workDir: "/srv/troupe/runs/abc" });
    expect(q).toMatch(/^Delete run "brisk-otter-17" \(GSM8K demo\)\?/);
    expect(q).toMatch(/Removed for good: its metrics, episodes \(transcripts\), events and checkpoint records, memory samples and logs/);
    expect(q).toContain("Its files on runner gpu-1 are NOT removed");
    expect(q).toContain("/srv/troupe/runs/abc");
  });

  it("still says the files are not removed when it does not know where they are", () => {
    expect(deleteConfirmation({ name: "calm-fox-3", specName: "s" })).toMatch(/stay on the runner host that ran it/);
  });
});
