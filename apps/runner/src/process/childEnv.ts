import { ACTOR_KEY_ENVS_VAR, TROUPE_SECRETS, parseList } from "@troupe/contracts";

/**
 * The environment a runtime child starts with, built from an allowlist (issue 30): what Python, torch, CUDA,
 * NCCL, Triton, the Hugging Face caches, the locale and Troupe's own runtime settings read, and the key
 * variables the operator lists in TROUPE_ACTOR_KEY_ENVS. Nothing else of the runner's environment (cloud
 * credentials, tokens, our database and Redis URLs, the admin password) reaches a run, a reward test or the
 * capabilities probe: a spec an editor wrote can then send nothing the operator did not list.
 */

const EXACT = new Set([
  "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM",
  "PYTHONPATH", "PYTHONHASHSEED", "PYTHONWARNINGS", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "VIRTUAL_ENV",
  "LD_LIBRARY_PATH", "CC", "CXX", "XDG_CACHE_HOME", "TOKENIZERS_PARALLELISM", "HUGGINGFACE_HUB_CACHE",
  "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MASTER_ADDR", "MASTER_PORT",
]);
const PREFIXES = ["LC_", "CUDA_", "NVIDIA_", "NCCL_", "TORCH_", "PYTORCH_", "TORCHINDUCTOR_", "TRITON_", "HF_", "TRANSFORMERS_", "GLOO_", "KMP_", "RAY_", "TROUPE_"];
/** Names that look like credentials are withheld even under an allowed prefix (HF_TOKEN, RAY_…_PASSWORD). */
const SECRET_LOOKING = /(PASSWORD|PASSWD|SECRET|TOKEN|CREDENTIAL|PRIVATE|API_?KEY|ACCESS_KEY|_KEY$)/;
/** Allowed names that only look like secrets. */
const NOT_SECRETS = new Set([ACTOR_KEY_ENVS_VAR]);

export class KeyEnvListError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "KeyEnvListError";
  }
}

/** The operator's key variables (TROUPE_ACTOR_KEY_ENVS); throws when it names one of Troupe's own secrets. */
export function actorKeyEnvs(parentEnv: NodeJS.ProcessEnv): string[] {
  const names = parseList(parentEnv[ACTOR_KEY_ENVS_VAR]);
  for (const name of names) {
    if ((TROUPE_SECRETS as readonly string[]).includes(name)) {
      throw new KeyEnvListError(`${ACTOR_KEY_ENVS_VAR} names ${name}, one of Troupe's own secrets, which never reaches a run: remove it`);
    }
    if (!/^[A-Z_][A-Z0-9_]*$/.test(name)) throw new KeyEnvListError(`${ACTOR_KEY_ENVS_VAR} names "${name}", not an environment variable name`);
  }
  return names;
}

/** Whether the allowlist passes a variable of the runner's environment on (key variables aside). */
export function passed(name: string): boolean {
  if ((TROUPE_SECRETS as readonly string[]).includes(name)) return false;
  if (SECRET_LOOKING.test(name) && !NOT_SECRETS.has(name)) return false;
  return EXACT.has(name) || PREFIXES.some((p) => name.startsWith(p));
}

/**
 * The child's environment: the allowed part of `parentEnv`, the listed key variables, then `extra` (the
 * runner's own settings for the child: CUDA_VISIBLE_DEVICES, a test's PYTHONPATH). Troupe's secrets are
 * removed last, whoever added them.
 */
export function runtimeEnv(parentEnv: NodeJS.ProcessEnv, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(parentEnv)) if (value !== undefined && passed(name)) env[name] = value;
  for (const name of actorKeyEnvs(parentEnv)) if (parentEnv[name] !== undefined) env[name] = parentEnv[name];
  for (const [name, value] of Object.entries(extra)) if (value !== undefined) env[name] = value;
  for (const name of TROUPE_SECRETS) delete env[name];
  return env as NodeJS.ProcessEnv;
}
