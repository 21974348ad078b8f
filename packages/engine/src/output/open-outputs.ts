// Every output of a pipeline opened for a runner: its view compiled (output-views.ts in
// @sluice/pipeline-spec), its sink table or operator, and its timing. A pipeline with a top-level sink
// has one output, "": behind a join it goes through the same stage as named outputs (the rows it
// receives are the join's), with the pipeline's expectations and filter left out — they ran before
// the join, on the source's rows.
import { compileSpec, outputViews, type TCompiledSpec, type TPipelineSpec } from "@sluice/pipeline-spec";
import { openResult, type OpenedResult, type ResultContext } from "../runner/open-result";
import { outputTiming, type OutputTiming } from "./output-time";

export interface OpenedOutput {
  name: string;
  compiled: TCompiledSpec;
  result: OpenedResult;
  timing: OutputTiming;
}

export async function openOutputs(
  ctx: Omit<ResultContext, "output">,
  spec: TPipelineSpec,
): Promise<OpenedOutput[]> {
  const opened: OpenedOutput[] = [];
  for (const view of outputViews(spec)) {
    const own =
      view.name === ""
        ? {
            ...view.spec,
            expectations: [],
            transform: view.spec.transform?.select ? { select: view.spec.transform.select } : undefined,
          }
        : view.spec;
    const compiled = compileSpec(own);
    const result = await openResult({ ...ctx, output: view.name }, compiled);
    opened.push({ name: view.name, compiled, result, timing: outputTiming(view.name, compiled) });
  }
  return opened;
}
