exports = function(amount) {
  return amount.toFixed(2);
};
