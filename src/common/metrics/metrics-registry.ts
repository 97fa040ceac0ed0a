import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * The service's one Prometheus registry (not prom-client's global one, so a
 * library that registers there cannot clash). It sits below the contexts so
 * that every layer can count what happens in it; `GET /internal/metrics`
 * (src/metrics/) reads it.
 *
 * Every label takes values from a fixed, small set (route patterns, status
 * codes, outcome classes), never from anything a caller can vary freely:
 * the number of series must not grow with traffic.
 */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry });
