/**
 * The discovery resources (RFC 7644 §4): ServiceProviderConfig, ResourceTypes and Schemas,
 * as served under `/scim/v2/{target}/`. `base` is that URL, for `meta.location`.
 */
import type { JsonObject } from './attribute-path.js';
import { MAX_PAGE_SIZE } from './list-response.js';
import { RESOURCE_SCHEMAS, type Attribute, type ResourceSchema } from './resource-schemas.js';

export const SERVICE_PROVIDER_CONFIG_SCHEMA =
  'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig';
export const RESOURCE_TYPE_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType';
export const SCHEMA_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Schema';

/** Largest /Bulk: operations and bytes. */
export const BULK_MAX_OPERATIONS = 1000;
export const BULK_MAX_PAYLOAD_BYTES = 4 * 1024 * 1024;

export function serviceProviderConfig(base: string): JsonObject {
  return {
    schemas: [SERVICE_PROVIDER_CONFIG_SCHEMA],
    documentationUri: 'https://github.com/porter/porter/blob/main/docs/scim.md',
    patch: { supported: true },
    bulk: {
      supported: true,
      maxOperations: BULK_MAX_OPERATIONS,
      maxPayloadSize: BULK_MAX_PAYLOAD_BYTES,
    },
    filter: { supported: true, maxResults: MAX_PAGE_SIZE },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'porter token',
        description:
          'A token from `porter tokens create --scim-only`, sent as Authorization: Bearer',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  };
}

export function resourceTypes(base: string): JsonObject[] {
  return (['User', 'Group'] as const).map((name) => {
    const { core, extensions } = RESOURCE_SCHEMAS[name];
    return {
      schemas: [RESOURCE_TYPE_SCHEMA],
      id: name,
      name,
      endpoint: `/${name}s`,
      description: core.description,
      schema: core.id,
      schemaExtensions: extensions.map((schema) => ({ schema: schema.id, required: false })),
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/${name}` },
    };
  });
}

function attributeDocument(attribute: Attribute): JsonObject {
  return {
    name: attribute.name,
    type: attribute.type,
    multiValued: attribute.multiValued ?? false,
    description: attribute.description ?? '',
    required: attribute.required ?? false,
    caseExact: attribute.caseExact ?? false,
    mutability: attribute.mutability ?? 'readWrite',
    returned: attribute.returned ?? 'default',
    uniqueness: attribute.uniqueness ?? 'none',
    ...(attribute.subAttributes
      ? { subAttributes: attribute.subAttributes.map(attributeDocument) }
      : {}),
  };
}

function schemaDocument(schema: ResourceSchema, base: string): JsonObject {
  return {
    schemas: [SCHEMA_SCHEMA],
    id: schema.id,
    name: schema.name,
    description: schema.description,
    attributes: schema.attributes.map(attributeDocument),
    meta: { resourceType: 'Schema', location: `${base}/Schemas/${schema.id}` },
  };
}

export function schemas(base: string): JsonObject[] {
  const all = Object.values(RESOURCE_SCHEMAS).flatMap(({ core, extensions }) => [
    core,
    ...extensions,
  ]);
  return all.map((schema) => schemaDocument(schema, base));
}
