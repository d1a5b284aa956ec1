import OpenAI from 'openai';

/**
 * What to tell a user whose OpenAI-compatible endpoint failed: which URL, what went wrong, and
 * what to check. The client's own "Connection error." names neither the server nor a fix.
 */
export function describeEndpointFailure(what: string, baseURL: string, model: string, e: unknown): string {
  const at = `${what} request to ${baseURL} (model "${model}")`;
  if (e instanceof OpenAI.APIConnectionTimeoutError)
    return `${at} timed out: is the server overloaded, or the model still loading? Raise the timeout if it is slow to start`;
  if (e instanceof OpenAI.APIConnectionError) {
    const cause = errorCode(e);
    return `${at} could not connect${cause ? ` (${cause})` : ''}: is the server running at that address? For Ollama, start it with \`ollama serve\` (default http://127.0.0.1:11434/v1)`;
  }
  if (e instanceof OpenAI.AuthenticationError || e instanceof OpenAI.PermissionDeniedError)
    return `${at} was refused (${e.status}): check the API key (MEMCORE_EMBED_API_KEY, MEMCORE_LLM_API_KEY or OPENAI_API_KEY)`;
  if (e instanceof OpenAI.NotFoundError)
    return `${at} found no such model or route (404): check the model name (for Ollama: \`ollama pull ${model}\`) and that the base URL ends in /v1`;
  if (e instanceof OpenAI.APIError && e.status !== undefined) return `${at} failed with HTTP ${e.status}: ${e.message}`;
  return `${at} failed: ${e instanceof Error ? e.message : String(e)}`;
}

/** The system error code (ECONNREFUSED, ENOTFOUND, …) somewhere down the cause chain. */
function errorCode(e: unknown): string | undefined {
  for (let c: unknown = e, depth = 0; c && typeof c === 'object' && depth < 5; c = (c as { cause?: unknown }).cause, depth++) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
  }
  return undefined;
}
