import { MongoClient } from 'mongodb';

/** Drops a database a MongoDB-wire suite made for itself. */
export async function dropMongoDatabase(url: string, database: string): Promise<void> {
  const client = await MongoClient.connect(url);
  try {
    await client.db(database).dropDatabase();
  } finally {
    await client.close();
  }
}
