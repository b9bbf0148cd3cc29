exports = async function(cart) {
  const rate = context.values.get("taxRate");
  return cart.total * (1 + rate);
};
