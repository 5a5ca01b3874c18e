import { Resvg } from '@resvg/resvg-js';
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { MetricsRow } from '../store/run.js';
import type { ChartGroup } from './groups.js';

/** A run's metrics under the label its series carry when runs overlay. */
export interface RunSeries {
  label: string;
  rows: readonly MetricsRow[];
}

/** Most points a series draws; longer ones keep every k-th row (and their last), so a 3,000-iteration run stays a small file. */
const MAX_POINTS = 600;
const FONT = 'DejaVu Sans';

/** The long-form points of a chart: one {iteration, value, series} per finite value. */
export function chartPoints(
  group: ChartGroup,
  runs: readonly RunSeries[],
): Array<{ iteration: number; value: number; series: string }> {
  const out: Array<{ iteration: number; value: number; series: string }> = [];
  for (const run of runs) {
    for (const key of group.keys) {
      const pts = run.rows.filter((r) => typeof r[key] === 'number' && Number.isFinite(r[key]));
      const stride = Math.ceil(pts.length / MAX_POINTS);
      const kept = pts.filter((_, i) => i % stride === 0 || i === pts.length - 1);
      const series = runs.length > 1 ? `${run.label}: ${key}` : key;
      for (const r of kept) out.push({ iteration: r.iteration, value: r[key] as number, series });
    }
  }
  return out;
}

/** The vega-lite spec of a chart: lines over iterations, one colour per series (a point per value when a series is sparse, as evaluations are). */
export function chartSpec(group: ChartGroup, runs: readonly RunSeries[]): TopLevelSpec {
  const values = chartPoints(group, runs);
  const series = new Set(values.map((v) => v.series));
  const sparse = values.length / Math.max(1, series.size) <= 60;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: group.title,
    width: 520,
    height: 220,
    background: 'white',
    config: { font: FONT, legend: { labelLimit: 440, orient: 'bottom', columns: 2 } },
    data: { values },
    mark: { type: 'line', point: sparse, strokeWidth: 1.5 },
    encoding: {
      x: { field: 'iteration', type: 'quantitative', title: 'iteration' },
      y: { field: 'value', type: 'quantitative', title: null, scale: { zero: false } },
      color: { field: 'series', type: 'nominal', title: null },
    },
  };
}

/** Renders a vega-lite spec to SVG headless (vega's own SVG renderer, no browser). */
export async function toSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** Rasterises an SVG to PNG with the system's fonts (DejaVu on Debian: fonts-dejavu-core). */
export function toPng(svg: string, scale = 2): Buffer {
  const r = new Resvg(svg, {
    background: 'white',
    fitTo: { mode: 'zoom', value: scale },
    font: { loadSystemFonts: true, defaultFontFamily: FONT },
  });
  return r.render().asPng();
}
