exports = function(payload) {
  return payload.query.text;
};
