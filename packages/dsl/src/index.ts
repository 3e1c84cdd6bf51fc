/**
 * The round-spec language (`Bob -> Alice -> (Bob/Alice)*5`) lives here. The full parser,
 * sampler and editor support are the "Round-spec language" issue; the foundation only
 * needs environments without a round spec (single-turn).
 */
export {};
