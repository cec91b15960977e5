# porter: one image for the sandbox, the API and the workers (the command picks the role).
FROM node:20-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY src ./src
COPY workers ./workers
COPY examples ./examples
COPY tsconfig.json ./
# the bundle porter runs from (bin/bundle.js), made now: the image's user cannot write /app
RUN node bin/porter.js --version
# named volumes take the owner of these directories when first created
RUN mkdir -p /exports /data && chown node:node /exports /data
USER node
ENTRYPOINT ["node", "bin/porter.js"]
CMD ["--help"]
