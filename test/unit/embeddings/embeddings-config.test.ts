import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { createEmbeddingProvider, LOCAL_PROVIDER_ID, LocalEmbeddingProvider, RemoteEmbeddingProvider } from '../../../src/embeddings/index.js';

const env = (vars: Record<string, string> = {}) => ({ DATA_DIR: mkdtempSync(join(tmpdir(), 'quarry-config-')), ...vars });

describe('EMBEDDINGS_* settings', () => {
  it('when nothing is set, then the local model is used, with no network settings', () => {
    const config = loadConfig(env());
    expect(config.embeddings).toEqual({ provider: 'local', url: null, model: null, apiKey: null });
    const provider = createEmbeddingProvider(config.embeddings);
    expect(provider).toBeInstanceOf(LocalEmbeddingProvider);
    expect(provider.id).toBe(LOCAL_PROVIDER_ID);
    expect(provider.dimensions).toBe(512);
  });

  it('when remote is chosen with a URL and model, then the remote provider is used with the model in its id', () => {
    const config = loadConfig(env({ EMBEDDINGS_PROVIDER: 'remote', EMBEDDINGS_URL: 'https://api.example.com/v1', EMBEDDINGS_MODEL: 'text-embedding-3-small', EMBEDDINGS_API_KEY: 'sk-x' }));
    const provider = createEmbeddingProvider(config.embeddings);
    expect(provider).toBeInstanceOf(RemoteEmbeddingProvider);
    expect(provider.id).toBe('remote:text-embedding-3-small');
  });

  it('when remote lacks its URL or model, or a value is bad, then the start stops naming every problem', () => {
    expect(() => loadConfig(env({ EMBEDDINGS_PROVIDER: 'remote' }))).toThrow('EMBEDDINGS_PROVIDER=remote needs EMBEDDINGS_URL and EMBEDDINGS_MODEL');
    expect(() => loadConfig(env({ EMBEDDINGS_PROVIDER: 'openai' }))).toThrow('EMBEDDINGS_PROVIDER must be one of local, remote');
    expect(() => loadConfig(env({ EMBEDDINGS_URL: 'ftp://x' }))).toThrow('EMBEDDINGS_URL must be an http(s) URL');
  });
});
