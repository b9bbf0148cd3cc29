exports = (name) => `${context.environment.values.greeting}, ${name ?? "stranger"}! (${context.environment.tag})`;
