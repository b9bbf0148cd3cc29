exports = function(payload, response) {
  return { ok: true };
};
