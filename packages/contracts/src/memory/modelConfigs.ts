/**
 * Architecture numbers the memory estimate needs, for the tiny presets and common Hugging Face
 * models. Copied from each model's `config.json` (decoder-only, RoPE, GQA). A model not listed is
 * estimated from a parameter count the user types in, with shape numbers scaled from the nearest
 * listed model (said so in the UI).
 */
export interface ModelConfig {
  hiddenSize: number;
  layers: number;
  heads: number;
  kvHeads: number;
  intermediateSize: number;
  vocabSize: number;
  tiedEmbeddings: boolean;
  /** Qwen2 puts biases on q, k and v; Llama has none. */
  qkvBias: boolean;
}

/** Parameters of a decoder from its config: embeddings, per-layer attention + SwiGLU MLP + 2 RMSNorms, final norm, head. */
export function paramsFromConfig(c: ModelConfig): number {
  const headDim = c.hiddenSize / c.heads;
  const kvDim = c.kvHeads * headDim;
  const attention =
    c.hiddenSize * c.hiddenSize + // q
    2 * c.hiddenSize * kvDim + // k, v
    c.hiddenSize * c.hiddenSize + // o
    (c.qkvBias ? c.hiddenSize + 2 * kvDim : 0);
  const mlp = 3 * c.hiddenSize * c.intermediateSize; // gate, up, down
  const perLayer = attention + mlp + 2 * c.hiddenSize;
  const embeddings = c.vocabSize * c.hiddenSize * (c.tiedEmbeddings ? 1 : 2);
  return embeddings + c.layers * perLayer + c.hiddenSize;
}

/** `tiny` presets (gpu-runtime/src/troupe/models.py): Qwen2, character vocabulary of 100, kv heads = heads. */
export const TINY_PRESET_CONFIGS: Record<string, ModelConfig> = {
  "tiny-char-2l": { hiddenSize: 64, layers: 2, heads: 4, kvHeads: 4, intermediateSize: 256, vocabSize: 100, tiedEmbeddings: true, qkvBias: true },
  "tiny-char-4l": { hiddenSize: 128, layers: 4, heads: 4, kvHeads: 4, intermediateSize: 512, vocabSize: 100, tiedEmbeddings: true, qkvBias: true },
};

const qwen = (hiddenSize: number, layers: number, heads: number, kvHeads: number, intermediateSize: number, tied: boolean): ModelConfig => ({
  hiddenSize, layers, heads, kvHeads, intermediateSize, vocabSize: 151936, tiedEmbeddings: tied, qkvBias: true,
});
const llama = (hiddenSize: number, layers: number, heads: number, kvHeads: number, intermediateSize: number, tied: boolean): ModelConfig => ({
  hiddenSize, layers, heads, kvHeads, intermediateSize, vocabSize: 128256, tiedEmbeddings: tied, qkvBias: false,
});

/** Common Hugging Face ids (the `-Instruct` variants share their base model's shape). */
export const HF_MODEL_CONFIGS: Record<string, ModelConfig> = {
  "Qwen/Qwen2.5-0.5B": qwen(896, 24, 14, 2, 4864, true),
  "Qwen/Qwen2.5-1.5B": qwen(1536, 28, 12, 2, 8960, true),
  "Qwen/Qwen2.5-3B": qwen(2048, 36, 16, 2, 11008, true),
  "Qwen/Qwen2.5-7B": { ...qwen(3584, 28, 28, 4, 18944, false), vocabSize: 152064 },
  "Qwen/Qwen2.5-14B": { ...qwen(5120, 48, 40, 8, 13824, false), vocabSize: 152064 },
  "meta-llama/Llama-3.2-1B": llama(2048, 16, 32, 8, 8192, true),
  "meta-llama/Llama-3.2-3B": llama(3072, 28, 24, 8, 8192, true),
  "meta-llama/Llama-3.1-8B": llama(4096, 32, 32, 8, 14336, false),
};

/** The config for a model id: exact, or with `-Instruct` / `-Chat` stripped. */
export function knownHfConfig(id: string): ModelConfig | undefined {
  return HF_MODEL_CONFIGS[id] ?? HF_MODEL_CONFIGS[id.replace(/-(Instruct|Chat|it)$/i, "")];
}

/**
 * A stand-in shape for an unknown model of `params` parameters: the listed model closest in size,
 * so KV cache and activations scale with a plausible width and depth.
 */
export function nearestConfig(params: number): ModelConfig {
  let best = HF_MODEL_CONFIGS["Qwen/Qwen2.5-0.5B"]!;
  let bestGap = Infinity;
  for (const c of Object.values(HF_MODEL_CONFIGS)) {
    const gap = Math.abs(Math.log(paramsFromConfig(c) / params));
    if (gap < bestGap) [best, bestGap] = [c, gap];
  }
  return best;
}
