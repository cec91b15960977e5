/* eslint-disable @typescript-eslint/no-explicit-any -- SCIM answers are read as the JSON they are */
/** One SCIM request over real HTTP, as an identity provider sends it, and its answer. */

export interface ScimAnswer {
  status: number;
  headers: Headers;
  /** The body as text ('' when there is none). */
  text: string;
  /** The body parsed as JSON; undefined when there is none. */
  body: any;
}

/** Sends `body` (as application/scim+json) to `url` with the bearer `token`. */
export async function scimRequest(
  url: string,
  token: string,
  method: string,
  body?: unknown,
): Promise<ScimAnswer> {
  const response = await fetch(url, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    body: text ? JSON.parse(text) : undefined,
  };
}
