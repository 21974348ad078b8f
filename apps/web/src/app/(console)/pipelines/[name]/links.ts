// Links inside a pipeline's pages; the version is in the query string (?v=N) when it is not the serving one.
export const pipelineHref = (pipeline: string, version?: number | null) =>
  `/pipelines/${encodeURIComponent(pipeline)}${version ? `?v=${version}` : ""}`;

export const batchHref = (pipeline: string, batchId: number, version?: number | null) =>
  `/pipelines/${encodeURIComponent(pipeline)}/batches/${batchId}${version ? `?v=${version}` : ""}`;

export const deadLettersHref = (pipeline: string) =>
  `/pipelines/${encodeURIComponent(pipeline)}#dead-letters`;

/** Pipeline names are slugs; anything else in the URL is looked up as typed and simply not found. */
export function pipelineName(param: string): string {
  try {
    return decodeURIComponent(param);
  } catch {
    return param;
  }
}
