console.log("shop");
