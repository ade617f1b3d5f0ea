import kafkajs = require('kafkajs');
export = kafkajs;
