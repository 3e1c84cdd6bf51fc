"use client";

import {
  ADVANTAGE_ESTIMATORS,
  ADVANTAGE_SUMMARIES,
  ALGORITHM_NAMES,
  ALGORITHM_SUMMARIES,
  GRPO_FAMILY,
  HIERARCHICAL_ROLES,
  OFFLINE_FAMILY,
  PPO_FAMILY,
  PROPOSER_REWARDS,
  type AdvantageEstimator,
  type AlgorithmName,
} from "@troupe/contracts";
import { getIn } from "../../lib/draftPath";
import { fieldDomId } from "../../lib/specIssues";
import { useRunnerSupport } from "../../../designer/hooks/useRunnerSupport";
import { EngineSettings } from "./EngineSettings";
import { TrackersSettings } from "./TrackersSettings";
import { AdvisorySettings } from "./AdvisorySettings";
import { RolloutFields } from "./RolloutFields";
import { TagsField } from "./TagsField";
import { DraftField, IssueText, useComposer } from "./fields";

/** Name, seed, tags; algorithm; trainer; training engine. Every input says what it does in one line. */
export function SettingsSections() {
  const { draft, set } = useComposer();
  const tags = getIn(draft, "tags");
  const unavailable = useRunnerSupport();
  const algorithm = String(getIn(draft, "algorithm.name") ?? "grpo") as AlgorithmName;
  return (
    <>
      <fieldset>
        <legend>Experiment</legend>
        <div className="form-grid">
          <DraftField kind="text" path="name" label="Name" />
          <DraftField kind="number" path="seed" label="Seed" placeholder="0" integer hint="Same seed, same spec: same run (on the same hardware)." />
          <div className="form-field">
            <label htmlFor={fieldDomId("tags")}>Tags</label>
            <TagsField id={fieldDomId("tags")} tags={Array.isArray(tags) ? tags.map(String) : []} onChange={(list) => set("tags", list)} />
            <span className="hint">Comma-separated; runs inherit them (filter the runs table by tag).</span>
            <IssueText path="tags" />
          </div>
        </div>
        <div className="form-field">
          <label htmlFor={fieldDomId("description")}>Description</label>
          <textarea
            id={fieldDomId("description")}
            rows={2}
            value={typeof draft.description === "string" ? draft.description : ""}
            onChange={(e) => set("description", e.target.value)}
          />
        </div>
      </fieldset>
      <fieldset>
        <legend>Algorithm</legend>
        <div className="form-grid">
          <DraftField kind="select" path="algorithm.name" label="Algorithm" options={ALGORITHM_NAMES} fallback="grpo" hint={ALGORITHM_SUMMARIES[algorithm] ?? ""} />
          <DraftField kind="number" path="algorithm.groupSize" label="Group size" placeholder="8" integer hint="Completions per prompt; advantages compare within a group." />
          <RolloutFields />
          {!listed(OFFLINE_FAMILY, algorithm) && <EntropyField />}
          {listed(GRPO_FAMILY, algorithm) && <AdvantageFields advantage={String(getIn(draft, "algorithm.advantage") ?? "group") as AdvantageEstimator} />}
          {listed(PPO_FAMILY, algorithm) && <PpoFields mixed={algorithm === "vdn" || algorithm === "qmix"} />}
          {algorithm === "qmix" && <QmixFields />}
          {algorithm === "happo" && <HappoFields />}
          {algorithm === "cory" && <CoryFields />}
          {algorithm === "dpo" && <DpoFields />}
        </div>
      </fieldset>
      <fieldset>
        <legend>Trainer</legend>
        <div className="form-grid">
          <DraftField kind="number" path="trainer.steps" label="Steps" placeholder="100" integer hint="Optimizer steps (each one batch of rollouts); 0 is an eval-only run: every environment evaluated once." />
          <DraftField kind="number" path="trainer.promptsPerStep" label="Prompts per step" placeholder="4" integer hint="Each yields a group of completions." />
          <DraftField kind="select" path="trainer.device" label="Device" options={["auto", "cpu", "cuda"]} fallback="auto" unavailable={unavailable.device} hint="auto: CUDA when the runner has it." />
          <DraftField kind="number" path="trainer.cpuThreads" label="CPU threads" placeholder="0" integer hint="Torch threads on CPU; 0 lets torch decide." />
          <DraftField kind="number" path="trainer.evalEvery" label="Evaluate every" placeholder="0" integer hint="Steps between evaluations; 0 = never." />
          <DraftField kind="number" path="trainer.checkpointEvery" label="Checkpoint every" placeholder="0" integer hint="Steps between checkpoints; 0 = never." />
          <DraftField kind="number" path="trainer.episodesPerStep" label="Transcripts per step" placeholder="4" integer hint="Samples recorded for the run page, rounded up to whole GRPO groups (every sample of a group, with its reward and advantage)." />
        </div>
      </fieldset>
      <EngineSettings />
      <TrackersSettings />
      <AdvisorySettings />
    </>
  );
}

/** Whether `name` is in one of the contracts' name lists. */
const listed = (list: readonly string[], name: string) => list.includes(name);

/**
 * The GRPO family's advantages: group-normalised, RAE's per-seat moving baseline (with its decay), or hierarchical
 * proposer–solver (its roles, the solver's samples per proposal and how the proposer is paid). The chosen one's line
 * (the contracts' ADVANTAGE_SUMMARIES) is the picker's hint.
 */
export function AdvantageFields({ advantage }: { advantage: AdvantageEstimator }) {
  return (
    <>
      <DraftField kind="select" path="algorithm.advantage" label="Advantage" options={ADVANTAGE_ESTIMATORS} fallback="group" hint={ADVANTAGE_SUMMARIES[advantage] ?? ""} />
      {advantage === "rae" && <DraftField kind="number" path="algorithm.rae.decay" label="RAE decay" placeholder="0.95" hint="baseline = decay x baseline + (1 - decay) x the step's mean reward, per actor and environment." />}
      {advantage === "hierarchical" && <HierarchicalFields />}
    </>
  );
}

/** hierarchical's settings: the two roles (environments[].roles), answers per proposal and the proposer's reward. */
function HierarchicalFields() {
  return (
    <>
      <DraftField kind="text" path="algorithm.hierarchical.proposer" label="Proposer role" placeholder={HIERARCHICAL_ROLES[0]} hint="The role that writes the task (environments[].roles; roundSpec: proposer -> solver)." />
      <DraftField kind="text" path="algorithm.hierarchical.solver" label="Solver role" placeholder={HIERARCHICAL_ROLES[1]} hint="The role that answers it; its advantage is against the other answers to the same task." />
      <DraftField kind="number" path="algorithm.hierarchical.solverSamples" label="Answers per task" placeholder="4" integer hint="The solver answers each proposal this many times; group size must be a multiple of it (at least 2 proposals per prompt)." />
      <DraftField
        kind="select"
        path="algorithm.hierarchical.proposerReward"
        label="Proposer's reward"
        options={PROPOSER_REWARDS}
        fallback="learnability"
        hint="From p, the solvers' mean reward: learnability p(1-p), best when solved half the time; frontier 1-p while 0 < p < 1; difficulty 1-p; own: the environment's rewards for the proposer, as they are."
      />
    </>
  );
}

/** qmix's mixing network. */
function QmixFields() {
  return <DraftField kind="number" path="algorithm.qmix.mixingEmbedDim" label="Mixing width" placeholder="32" integer hint="Width of the mixing network the hypernetworks produce per agent (its weights are kept >= 0: monotonic)." />;
}

/** happo's bound on the earlier agents' ratio product. */
function HappoFields() {
  return <DraftField kind="number" path="algorithm.happo.factorClip" label="Factor clip" placeholder="10" hint="The earlier agents' ratio product is kept within [1/clip, clip] (a whole message's ratio can be far from 1)." />;
}

/** cory's role exchange: how long each actor keeps its role (pioneer or observer). */
function CoryFields() {
  return <DraftField kind="number" path="algorithm.cory.swapEvery" label="Swap roles every" placeholder="10" integer hint="Steps before the pioneer's and the observer's actors exchange roles (environments[].roles pioneer and observer)." />;
}

/** The entropy bonus, for every learner that samples (contracts runSpec.ts: absent is 0). */
function EntropyField() {
  return (
    <DraftField
      kind="number"
      path="algorithm.entropyCoef"
      label="Entropy bonus"
      placeholder="0"
      hint="Weight of the policy's mean token entropy subtracted from the loss: keeps it exploring. Empty: 0 (pretrained LLMs: 0 to 0.001; tiny models trained from scratch may need 0.05)."
    />
  );
}

/** DPO's reference strength and loss variant (TRL's names), shown for dpo only. */
function DpoFields() {
  return (
    <>
      <DraftField kind="number" path="algorithm.beta" label="Beta" placeholder="0.1" hint="How far the policy may move from its reference (ipo: the regulariser tau)." />
      <DraftField kind="select" path="algorithm.dpoLoss" label="DPO loss" options={["sigmoid", "hinge", "ipo", "robust"]} fallback="sigmoid" hint="sigmoid: DPO; hinge: SLiC; ipo: IPO; robust: robust DPO (label smoothing)." />
      <DraftField kind="number" path="algorithm.labelSmoothing" label="Label smoothing" placeholder="0" hint="robust only: the chance a preference label is flipped (below 0.5)." />
    </>
  );
}

/** GAE and the critics' settings, shown for the PPO family only. */
function PpoFields({ mixed }: { mixed: boolean }) {
  return (
    <>
      <DraftField kind="number" path="algorithm.gamma" label="Gamma" placeholder="1" hint="Discount per token (mappo, happo, vdn, qmix: per turn) in GAE." />
      <DraftField kind="number" path="algorithm.lambda" label="GAE lambda" placeholder="0.95" hint="1: Monte Carlo returns; 0: one-step TD." />
      <DraftField kind="number" path="algorithm.valueClip" label="Value clip" placeholder="0.2" hint="How far a value may move from the rollout's per update; 0 = no clipping." />
      <DraftField kind="number" path="algorithm.criticLearningRate" label="Critic learning rate" placeholder="actor's" hint="Empty: each critic uses its actor's learning rate." />
      {!mixed && <DraftField kind="checkbox" path="algorithm.valueNorm" label="Value normalisation" fallback={true} hint="Critics learn returns scaled by their running mean and std (the MAPPO paper's); on unless unticked." />}
    </>
  );
}
