import { Inject, Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { DataSource } from 'typeorm';
import { DatabaseModule, InjectServiceDataSource, dataSourceToken, dbHealthCheck, runningEmbeddedDataDirs } from '../src';
import { notesFixture, uniqueSchema } from './fixtures/notes.fixture';

jest.setTimeout(30_000);

describe('DatabaseModule', () => {
  it('gives each service its own DataSource on one embedded database and closes them at shutdown', async () => {
    const dataDir = `memory://nest-${process.pid}`;
    const content = notesFixture(uniqueSchema('content'));
    const reporting = notesFixture(uniqueSchema('reporting'));
    const SETTINGS = 'SETTINGS';

    @Injectable()
    class Consumer {
      constructor(
        @InjectServiceDataSource('content') readonly content: DataSource,
        @Inject(dataSourceToken('reporting')) readonly reporting: DataSource,
      ) {}
    }

    @Module({ providers: [{ provide: SETTINGS, useValue: { dataDir } }], exports: [SETTINGS] })
    class SettingsModule {}

    const moduleRef = await Test.createTestingModule({
      imports: [
        DatabaseModule.forRoot({
          options: {
            service: 'content',
            schema: content.schema,
            entities: content.entities,
            migrations: content.migrations,
            dataDir,
            runMigrations: true,
          },
        }),
        DatabaseModule.forRootAsync({
          token: dataSourceToken('reporting'),
          imports: [SettingsModule],
          inject: [SETTINGS],
          useFactory: (settings: { dataDir: string }) => ({
            service: 'reporting',
            schema: reporting.schema,
            entities: reporting.entities,
            migrations: reporting.migrations,
            dataDir: settings.dataDir,
            runMigrations: true,
          }),
        }),
      ],
      providers: [Consumer],
    }).compile();
    const app = moduleRef.createNestApplication();
    await app.init();

    const consumer = app.get(Consumer);
    expect(consumer.content).not.toBe(consumer.reporting);
    expect((consumer.content.options as { schema?: string }).schema).toBe(content.schema);
    expect((consumer.reporting.options as { schema?: string }).schema).toBe(reporting.schema);
    await consumer.content.getRepository(content.NoteEntity).insert({ slug: 'a', body: 'content' });
    await consumer.reporting.getRepository(reporting.NoteEntity).insert({ slug: 'a', body: 'reporting' });
    expect(await dbHealthCheck(consumer.content)).toBe(true);
    expect(runningEmbeddedDataDirs()).toContain(dataDir);

    await app.close();

    expect(consumer.content.isInitialized).toBe(false);
    expect(consumer.reporting.isInitialized).toBe(false);
    expect(await dbHealthCheck(consumer.content)).toBe(false);
    expect(runningEmbeddedDataDirs()).not.toContain(dataDir);
  });
});
