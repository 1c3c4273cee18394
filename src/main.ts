import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Logger as PinoBridge } from 'nestjs-pino';
import { createApp } from './app/create-app.js';
import { applyHeapGrowth } from './app/heap-growth.js';
import { AppModule } from './app.module.js';
import { AppConfig } from './config/app-config.js';
import { InvalidEnvironmentError } from './config/environment.js';
import { DemoSeeder } from './modules/admin/index.js';

async function bootstrap(): Promise<void> {
  const config = AppConfig.fromProcess();
  if (config.runsApi) {
    const app = await createApp(config);
    await app.listen({ port: config.env.PORT, host: config.env.HOST });
    await app.get(DemoSeeder).seedOnFirstStart();
    const logger = new Logger('Bootstrap');
    logger.log(`API listening on ${config.publicBaseUrl} (role ${config.env.APP_ROLE}); OpenAPI at ${config.publicBaseUrl}/docs`);
    if (config.env.NODE_ENV === 'production' && !config.publicBaseUrl.startsWith('https://')) {
      // Media links are minted from PUBLIC_BASE_URL, and the contract promises HTTPS links.
      logger.warn(`PUBLIC_BASE_URL is ${config.publicBaseUrl}: media links given to clients are not HTTPS; serve behind TLS and set an https:// URL`);
    }
  } else {
    // Worker only: no HTTP server, the same modules (processors start in QueueLifecycle).
    applyHeapGrowth(config.env.HEAP_GROWING_PERCENT); // createApp does it for the API
    const app = await NestFactory.createApplicationContext(AppModule.create(config), { bufferLogs: true });
    app.useLogger(app.get(PinoBridge));
    app.enableShutdownHooks();
    new Logger('Bootstrap').log('worker started');
  }
}

bootstrap().catch((error: unknown) => {
  if (error instanceof InvalidEnvironmentError) {
    console.error(error.message);
  } else {
    console.error('boot failed:', error);
  }
  process.exit(1);
});
