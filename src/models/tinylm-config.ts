/** A TinyLM's shape (a leaf: its native scoring path reads it without the model). */
export interface TinyLMConfig {
  /** number of token ids */
  vocabSize: number;
  /** width of the residual stream */
  dModel: number;
  /** attention heads; must divide dModel */
  nHeads: number;
  /** transformer blocks */
  nLayers: number;
  /** longest sequence (prompt + completion); learned positions cover it */
  context: number;
  /** add PPO's value head (a linear map of the final hidden state) */
  valueHead?: boolean;
  /** seed of the weight initialisation */
  seed?: number;
}
