const http = require('http');
console.log('listening', http.STATUS_CODES[200]);
