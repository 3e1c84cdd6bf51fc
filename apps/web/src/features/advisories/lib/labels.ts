import type { AdvisoryKind, AdvisorySeverity } from "@troupe/contracts";

/** What each advisory kind is called in the UI (the contracts' kind names are for machines). */
export const ADVISORY_TITLES: Record<AdvisoryKind, string> = {
  collapse: "Answers collapsed",
  zero_variance_groups: "GRPO groups with no reward spread",
  entropy_collapse: "Entropy collapse",
  length_explosion: "Length explosion",
  truncation: "Completions truncated",
  kl_blowup: "KL blow-up",
  reward_hacking: "Reward hacking signs",
  non_finite: "NaN or infinite values",
  staleness: "Stale rollouts",
  actor_stalled: "Actor stopped changing",
  loss_not_falling: "Loss not falling",
  grad_norm_blowup: "Gradient-norm blow-up",
  dpo_margin_collapse: "DPO margin collapsing",
  dpo_logps_falling: "Chosen and rejected log-probs both falling",
  overfitting: "Overfitting (eval loss rising)",
};

export const SEVERITY_WORDS: Record<AdvisorySeverity, string> = { info: "info", warning: "warning", critical: "critical" };
