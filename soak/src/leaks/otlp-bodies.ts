/**
 * What the leak suite reads out of an OTLP/JSON export body (as @rein/testkit's `startOtlpCapture`
 * records it): how many spans and data points it holds, and its resources apart from the rest.
 */

/** Spans in an OTLP/JSON traces body. */
export function countSpans(body: string): number {
  const parsed = JSON.parse(body) as { resourceSpans?: { scopeSpans?: { spans?: unknown[] }[] }[] }
  return (parsed.resourceSpans ?? []).reduce((sum, resource) => sum + (resource.scopeSpans ?? []).reduce((inner, scope) => inner + (scope.spans?.length ?? 0), 0), 0)
}

/** Data points in an OTLP/JSON metrics body. */
export function countDataPoints(body: string): number {
  interface Metric { histogram?: { dataPoints?: unknown[] }; sum?: { dataPoints?: unknown[] }; gauge?: { dataPoints?: unknown[] } }
  const parsed = JSON.parse(body) as { resourceMetrics?: { scopeMetrics?: { metrics?: Metric[] }[] }[] }
  let points = 0
  for (const resource of parsed.resourceMetrics ?? []) {
    for (const scope of resource.scopeMetrics ?? []) {
      for (const metric of scope.metrics ?? []) points += (metric.histogram ?? metric.sum ?? metric.gauge)?.dataPoints?.length ?? 0
    }
  }
  return points
}

/**
 * An OTLP/JSON body cut in two: its resources (what every span or metric of the batch shares) and
 * everything else, each as JSON text.
 */
export function splitResources(body: string): { resources: string; rest: string } {
  const parsed = JSON.parse(body) as { resourceSpans?: { resource?: unknown }[]; resourceMetrics?: { resource?: unknown }[] }
  const batches = [...(parsed.resourceSpans ?? []), ...(parsed.resourceMetrics ?? [])]
  const resources = batches.map((batch) => batch.resource)
  for (const batch of batches) delete batch.resource
  return { resources: JSON.stringify(resources), rest: JSON.stringify(parsed) }
}
