/** The version every response's meta and the health report name (openapi.yaml, Meta.version and Health.version). */
export const serviceVersion = '1.0.0';
