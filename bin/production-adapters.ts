/**
 * The production adapters, each loaded only when the configuration picks it. Their client libraries cost
 * memory in every thread that loads them (the MongoDB driver's BSON serializer allocates a 17 MB buffer,
 * the EventStoreDB client brings gRPC and protobuf), and the embedded platform never uses them.
 * `require` rather than `import()`: the same code runs under tsx's CommonJS hook and under jest.
 */
/* eslint-disable @typescript-eslint/no-require-imports */

export function eventStoreDbAdapter(): typeof import('../infra/event-store/eventstoredb') {
  return require('../infra/event-store/eventstoredb') as typeof import('../infra/event-store/eventstoredb');
}

export function mongoReadStoreAdapter(): typeof import('../infra/read-store/mongodb') {
  return require('../infra/read-store/mongodb') as typeof import('../infra/read-store/mongodb');
}

export function kafkaStreamAdapter(): typeof import('../infra/stream/kafka') {
  return require('../infra/stream/kafka') as typeof import('../infra/stream/kafka');
}

export function gridFsBlobStoreAdapter(): typeof import('../infra/blob-store/gridfs') {
  return require('../infra/blob-store/gridfs') as typeof import('../infra/blob-store/gridfs');
}

export function mongoAttemptLogAdapter(): typeof import('../infra/attempts/mongodb') {
  return require('../infra/attempts/mongodb') as typeof import('../infra/attempts/mongodb');
}

export function mongoDeliveryStoreAdapter(): typeof import('../infra/deliveries/mongodb') {
  return require('../infra/deliveries/mongodb') as typeof import('../infra/deliveries/mongodb');
}

export function mongoDataKeyStoreAdapter(): typeof import('../infra/keys/mongodb') {
  return require('../infra/keys/mongodb') as typeof import('../infra/keys/mongodb');
}

export function awsKmsAdapter(): typeof import('../infra/keys/aws-kms') {
  return require('../infra/keys/aws-kms') as typeof import('../infra/keys/aws-kms');
}
